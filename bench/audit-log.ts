/**
 * One identity's requests to the apiserver, counted from kube-apiserver's audit log (JSON lines,
 * audit.k8s.io/v1 Events; harness/cluster/audit.ts writes the policy): by verb and resource, by
 * response code class, and those not answered with 2xx.
 *
 * client-go's `rest_client_requests_total` counts by method and code only; the audit log names
 * the resource, which says what the requests are for (a status update, a child's patch, a read).
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';

/** The fields of an audit event read here (the rest of the Event is ignored). */
export interface AuditEvent {
  kind?: string;
  apiVersion?: string;
  stage?: string;
  verb?: string;
  requestURI?: string;
  user?: { username?: string };
  objectRef?: {
    resource?: string;
    subresource?: string;
    apiGroup?: string;
    namespace?: string;
    name?: string;
  };
  responseStatus?: { code?: number };
  requestReceivedTimestamp?: string;
  stageTimestamp?: string;
}

export interface AuditCounts {
  /** Requests in the window. */
  total: number;
  /** By `<verb> <resource>` (see requestKey). */
  byRequest: Record<string, number>;
  /** By response code class: `2xx`, `4xx`, … (`none` when the event has no code). */
  byCodeClass: Record<string, number>;
  /** The requests not answered with 2xx, by `<verb> <resource> <code>`. */
  notOk: Record<string, number>;
}

export interface AuditWindow {
  /** The user name the apiserver authenticated (`user.username`). */
  user: string;
  /** requestReceivedTimestamp from `fromMs` to `toMs` (epoch ms, both included). */
  fromMs: number;
  toMs: number;
}

/** KubeCell's own API group, left out of the keys to keep them short. */
const OWN_GROUP = 'kubecell.io';

/**
 * `update virtualclusters/status`, `patch clusters.k3k.io`, `list namespaces`: the verb, then the
 * resource with its API group (none for the core group and KubeCell's own) and subresource. A
 * request for no resource (API discovery) is named by its path: `get /apis`.
 */
export function requestKey(event: AuditEvent): string {
  const verb = event.verb ?? '?';
  const ref = event.objectRef;
  if (!ref?.resource) return `${verb} ${(event.requestURI ?? '?').split('?')[0]}`;
  const group = ref.apiGroup && ref.apiGroup !== OWN_GROUP ? `.${ref.apiGroup}` : '';
  const subresource = ref.subresource ? `/${ref.subresource}` : '';
  return `${verb} ${ref.resource}${group}${subresource}`;
}

function codeClass(code: number | undefined): string {
  return code === undefined ? 'none' : `${Math.floor(code / 100)}xx`;
}

function add(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

/**
 * The requests of `window.user` received in the window, from audit log text. Only events of
 * stage ResponseComplete (or Panic) count, so that a policy that also logs other stages does not
 * count a request twice. A last line without its newline (being written) is left out.
 */
export function countAuditRequests(text: string, window: AuditWindow): AuditCounts {
  const counts: AuditCounts = { total: 0, byRequest: {}, byCodeClass: {}, notOk: {} };
  const lines = text.split('\n');
  if (!text.endsWith('\n')) lines.pop();
  for (const line of lines) {
    if (line.trim() === '') continue;
    const event = JSON.parse(line) as AuditEvent;
    if (event.kind !== 'Event') continue;
    if (event.stage !== 'ResponseComplete' && event.stage !== 'Panic') continue;
    if (event.user?.username !== window.user) continue;
    const received = Date.parse(event.requestReceivedTimestamp ?? '');
    if (!(received >= window.fromMs && received <= window.toMs)) continue;
    const key = requestKey(event);
    const code = event.responseStatus?.code;
    counts.total += 1;
    add(counts.byRequest, key);
    add(counts.byCodeClass, codeClass(code));
    if (code === undefined || code < 200 || code >= 300) add(counts.notOk, `${key} ${code ?? '?'}`);
  }
  return counts;
}

/** The audit log's size now: read from there later, only what was written meanwhile is read. */
export function auditLogOffset(file: string): number {
  return statSync(file).size;
}

/**
 * countAuditRequests of `file` from byte `offset` on (an offset from auditLogOffset). Should the
 * offset fall inside a line (taken while an event was being written), that line is left out.
 */
export function readAuditRequests(file: string, window: AuditWindow, offset = 0): AuditCounts {
  // One byte before the offset too: if it is the newline, the offset starts a line.
  const start = Math.max(0, offset - 1);
  const length = Math.max(0, statSync(file).size - start);
  const buffer = Buffer.alloc(length);
  const fd = openSync(file, 'r');
  let read = 0;
  try {
    while (read < length) {
      const got = readSync(fd, buffer, read, length - read, start + read);
      if (got === 0) break;
      read += got;
    }
  } finally {
    closeSync(fd);
  }
  const text = buffer.subarray(0, read).toString('utf8');
  return countAuditRequests(offset > 0 ? text.slice(text.indexOf('\n') + 1) : text, window);
}

/** Each count divided by `n` (per VirtualCluster), to two decimals. */
export function perEach(counts: Record<string, number>, n: number): Record<string, number> {
  return Object.fromEntries(
    Object.entries(counts).map(([key, count]) => [key, Math.round((count / n) * 100) / 100]),
  );
}
