// What the end-to-end scenarios share: reading objects the way a user does (`kubectl get -o
// json`), waiting for what a user would wait for, and the hook server's call counts. Nothing
// here writes a KubeCell object's status or calls a hook: Metacontroller does that.
import { readFileSync } from 'node:fs';
import type { KubeCellStack } from '../../../harness/cluster/kubecell-stack.js';
import { logTail, whileRunning } from '../../../harness/cluster/processes.js';
import { poll, type PollOptions, type PollOutcome } from '../../../harness/poll.js';

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface ObjectWithStatus {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    deletionTimestamp?: string;
    ownerReferences?: { kind: string; name: string; uid: string; controller?: boolean }[];
    resourceVersion?: string;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown> & { phase?: string; conditions?: Condition[] };
  data?: Record<string, string>;
}

/** `kubectl get <resource> <name> -o json`; undefined when it does not exist. */
export async function getObject(
  stack: KubeCellStack,
  resource: string,
  name: string,
  namespace?: string,
): Promise<ObjectWithStatus | undefined> {
  const result = await stack.cluster.kubectl([
    'get',
    resource,
    name,
    ...(namespace ? ['-n', namespace] : []),
    '-o',
    'json',
  ]);
  if (result.code === 0) return JSON.parse(result.stdout) as ObjectWithStatus;
  if (/NotFound|not found/.test(result.stderr)) return undefined;
  throw new Error(`kubectl get ${resource} ${name} failed: ${result.stderr}`);
}

/** `kubectl get <resource> -o json` (optionally `-n`, `-l`). */
export async function listObjects(
  stack: KubeCellStack,
  resource: string,
  options: { namespace?: string; selector?: string } = {},
): Promise<ObjectWithStatus[]> {
  const result = await stack.cluster.kubectl([
    'get',
    resource,
    ...(options.namespace ? ['-n', options.namespace] : ['--all-namespaces']),
    ...(options.selector ? ['-l', options.selector] : []),
    '-o',
    'json',
  ]);
  if (result.code !== 0) throw new Error(`kubectl get ${resource} failed: ${result.stderr}`);
  return (JSON.parse(result.stdout) as { items: ObjectWithStatus[] }).items;
}

/** Runs kubectl as the administrator and fails with its output when it does not succeed. */
export async function kubectl(
  stack: KubeCellStack,
  args: readonly string[],
  input?: string,
): Promise<string> {
  const result = await stack.cluster.kubectl(args, input === undefined ? {} : { input });
  if (result.code !== 0) {
    throw new Error(`kubectl ${args.join(' ')} failed:\n${result.stderr}${result.stdout}`);
  }
  return result.stdout;
}

/** `kubectl apply --server-side` of objects given as JSON, as a user (or another actor) would. */
export async function apply(
  stack: KubeCellStack,
  objects: unknown | unknown[],
  fieldManager = 'e2e-user',
): Promise<void> {
  const list = Array.isArray(objects) ? objects : [objects];
  await kubectl(
    stack,
    ['apply', '--server-side', '--force-conflicts', `--field-manager=${fieldManager}`, '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: list }),
  );
}

export function conditionOf(
  object: ObjectWithStatus | undefined,
  type: string,
): Condition | undefined {
  return object?.status?.conditions?.find((condition) => condition.type === type);
}

/** One line describing an object's phase and conditions, for failure messages. */
export function describeStatus(object: ObjectWithStatus | undefined): string {
  if (!object) return '(absent)';
  const conditions = (object.status?.conditions ?? [])
    .map((c) => `${c.type}=${c.status}/${c.reason ?? ''}${c.message ? ` (${c.message})` : ''}`)
    .join('; ');
  return `phase ${object.status?.phase ?? '(none)'}; ${conditions || 'no conditions'}`;
}

/**
 * Poll options (harness/poll.ts) for a wait on what KubeCell does in `stack`: every 300 ms, given
 * up at once when Metacontroller or the hook server exits, and on timeout the end of their logs:
 * `poll(what, probe, watching(stack, 120_000))`.
 */
export function watching(stack: KubeCellStack, timeoutMs = 60_000): PollOptions {
  return {
    timeoutMs,
    intervalMs: 300,
    abort: whileRunning(stack.metacontroller.process, stack.hookServer).abort,
    context: () =>
      `--- Metacontroller log (end):\n${metacontrollerErrors(stack)}\n` +
      `--- hook server log (end):\n${logTail(stack.hookServer.logFile, 15)}`,
  };
}

/**
 * `poll(what, check, watching(stack, timeoutMs))`, kept for the GPUCellPool scenarios
 * (gpucellpool-*.ts) until they call poll themselves; new code calls poll.
 */
export function eventually<T>(
  stack: KubeCellStack,
  what: string,
  check: () => Promise<PollOutcome<T>>,
  timeoutMs = 60_000,
): Promise<T> {
  return poll(what, check, watching(stack, timeoutMs));
}

/** Waits until the object's phase is `phase`; returns the object. */
export function eventuallyPhase(
  stack: KubeCellStack,
  resource: string,
  name: string,
  namespace: string | undefined,
  phase: string,
  timeoutMs = 60_000,
): Promise<ObjectWithStatus> {
  return poll<ObjectWithStatus>(
    `${resource} ${namespace ? `${namespace}/` : ''}${name} to be ${phase}`,
    async () => {
      const object = await getObject(stack, resource, name, namespace);
      return object !== undefined && object.status?.phase === phase
        ? { value: object }
        : { notYet: describeStatus(object) };
    },
    watching(stack, timeoutMs),
  );
}

/**
 * Waits until a VirtualClusterPlan has concluded (Accepted or Rejected) and returns it. Unknown
 * is no conclusion: the plan is evaluated again as its inputs fill in (decision D40), so a wait
 * that stopped at Unknown would read a state the plan is still passing through. `read` gets the
 * plan another way, for example as a tenant.
 */
export function eventuallyConcluded(
  stack: KubeCellStack,
  name: string,
  namespace: string,
  read: () => Promise<ObjectWithStatus | undefined> = () =>
    getObject(stack, 'virtualclusterplans.kubecell.io', name, namespace),
): Promise<ObjectWithStatus> {
  return poll<ObjectWithStatus>(
    `plan ${namespace}/${name} concluded`,
    async () => {
      const plan = await read();
      const decision = (plan?.status as { decision?: string } | undefined)?.decision;
      return plan !== undefined && (decision === 'Accepted' || decision === 'Rejected')
        ? { value: plan }
        : {
            notYet: `decision ${decision ?? '(none)'}; ${describeStatus(plan)}; checks ${JSON.stringify(plan?.status?.['checks'] ?? [])}`,
          };
    },
    watching(stack),
  );
}

/** Waits until the object is gone. */
export function eventuallyGone(
  stack: KubeCellStack,
  resource: string,
  name: string,
  namespace?: string,
  timeoutMs = 60_000,
): Promise<void> {
  return poll(
    `${resource} ${namespace ? `${namespace}/` : ''}${name} to be deleted`,
    async () => {
      const object = await getObject(stack, resource, name, namespace);
      return object === undefined
        ? { value: undefined }
        : {
            notYet: `still there (finalizers ${JSON.stringify(object.metadata.finalizers ?? [])}, ${describeStatus(object)})`,
          };
    },
    watching(stack, timeoutMs),
  );
}

/** The last lines of Metacontroller's log that report an error, shortened. */
export function metacontrollerErrors(stack: KubeCellStack, lines = 10): string {
  const log = readFileSync(stack.metacontroller.process.logFile, 'utf8').split('\n');
  return log
    .filter((line) => /"level":"error"|SyncError|failed/i.test(line))
    .slice(-lines)
    .map((line) => line.slice(0, 600))
    .join('\n');
}

export interface HookCalls {
  /** `<controller>/<hook>` → calls answered 200. */
  ok: Map<string, number>;
  /** `<controller>/<hook> <code>` → calls answered with anything else. */
  failed: Map<string, number>;
}

/** The hook server's `kubecell_hook_requests_total`, read from its /metrics. */
export async function hookCalls(stack: KubeCellStack): Promise<HookCalls> {
  const response = await fetch(`${stack.hookServerUrl}/metrics`);
  const text = await response.text();
  const calls: HookCalls = { ok: new Map(), failed: new Map() };
  const pattern =
    /^kubecell_hook_requests_total\{controller="([^"]+)",hook="([^"]+)",code="(\d+)"\} (\d+)/gm;
  for (const match of text.matchAll(pattern)) {
    const [, controller, hook, code, count] = match;
    const key = `${controller}/${hook}`;
    if (code === '200') calls.ok.set(key, Number(count));
    else calls.failed.set(`${key} ${code}`, Number(count));
  }
  return calls;
}

/** Unique names per test run, so that scenarios sharing a cluster never collide. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 7)}`;
}
