// What the two GPUCellPool end-to-end files share (gpucellpool-kubevirt.test.ts,
// gpucellpool-cluster-api.test.ts): a KubeCell stack of one provisioner whose apiserver keeps an
// audit log of pod deletions and evictions, the pool as `kubectl get gpucellpool` shows it, the
// samples moved into a namespace of the test, and consumer pods bound to a cell's Node.
//
// Nothing here plays KubeCell: pools are created as a user does, and their status is what
// Metacontroller wrote from the hooks' answers.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  METACONTROLLER_SERVICE_ACCOUNT,
  startKubeCellStack,
  type GpuCellPoolProvisioner,
  type KubeCellStack,
} from '../../../harness/cluster/kubecell-stack.js';
import { repoRoot } from '../../../harness/cluster/paths.js';
import { eventually, getObject, kubectl, type ObjectWithStatus } from './support.js';

/** What the kube-apiserver records: every pod deletion and every eviction, by whom. */
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    verbs: [create, delete, deletecollection]
    resources:
      - group: ''
        resources: [pods/eviction]
  - level: Metadata
    verbs: [delete, deletecollection]
    resources:
      - group: ''
        resources: [pods]
  - level: None
`;

export interface AuditedStack {
  stack: KubeCellStack;
  /** The apiserver's audit log (JSON lines). */
  auditLog: string;
  /** Stops the stack and removes the audit files. */
  stop(keepLogs: boolean): Promise<void>;
}

/**
 * A KubeCell stack with only `provisioner`'s upstream CRDs and GPUCellPool component (as a
 * platform running one provisioner installs it), its apiserver auditing pod deletions and
 * evictions.
 */
export async function startAuditedStack(
  provisioner: GpuCellPoolProvisioner,
): Promise<AuditedStack> {
  const dir = mkdtempSync(path.join(tmpdir(), `kubecell-e2e-${provisioner}-audit-`));
  const policy = path.join(dir, 'audit-policy.yaml');
  const auditLog = path.join(dir, 'audit.log');
  writeFileSync(policy, AUDIT_POLICY);
  try {
    const stack = await startKubeCellStack({
      provisioners: [provisioner],
      controlPlane: {
        extraApiserverArgs: [`--audit-policy-file=${policy}`, `--audit-log-path=${auditLog}`],
      },
    });
    return {
      stack,
      auditLog,
      async stop(keepLogs: boolean): Promise<void> {
        await stack.stop({ keepLogs });
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

interface AuditEvent {
  verb: string;
  user?: { username?: string };
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
}

/** Every audited request: evictions, and pod deletions with who made them. */
export function auditedPodRequests(auditLog: string): {
  evictions: string[];
  deletions: { user: string; pod: string }[];
} {
  const events = readFileSync(auditLog, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as AuditEvent);
  const pod = (event: AuditEvent) =>
    `${event.objectRef?.namespace ?? ''}/${event.objectRef?.name ?? '(all)'}`;
  return {
    evictions: events
      .filter((event) => event.objectRef?.subresource === 'eviction')
      .map((event) => `${event.user?.username ?? '?'} ${event.verb} ${pod(event)}`),
    deletions: events
      .filter(
        (event) =>
          event.objectRef?.resource === 'pods' &&
          event.objectRef.subresource === undefined &&
          event.verb.startsWith('delete'),
      )
      .map((event) => ({ user: event.user?.username ?? '?', pod: pod(event) })),
  };
}

/** Metacontroller's user name in the audit log: its ServiceAccount. */
export const METACONTROLLER_USER = `system:serviceaccount:${METACONTROLLER_SERVICE_ACCOUNT.namespace}:${METACONTROLLER_SERVICE_ACCOUNT.name}`;

/** `kubectl get gpucellpool <name>` as a user reads it: column header → value. */
export async function poolColumns(
  stack: KubeCellStack,
  name: string,
): Promise<Record<string, string>> {
  const [header = '', row = ''] = (await kubectl(stack, ['get', 'gpucellpool', name]))
    .trim()
    .split('\n');
  const keys = header.trim().split(/\s+/);
  const values = row.trim().split(/\s+/);
  return Object.fromEntries(keys.map((key, index) => [key, values[index] ?? '']));
}

/** Waits until `kubectl get gpucellpool` shows these DESIRED, CURRENT and READY. */
export function eventuallyColumns(
  stack: KubeCellStack,
  name: string,
  wanted: { DESIRED: number; CURRENT: number; READY: number },
  timeoutMs = 120_000,
): Promise<Record<string, string>> {
  return eventually<Record<string, string>>(
    stack,
    `gpucellpool ${name} to show DESIRED ${wanted.DESIRED} CURRENT ${wanted.CURRENT} READY ${wanted.READY}`,
    async () => {
      const columns = await poolColumns(stack, name);
      const matches = (Object.keys(wanted) as (keyof typeof wanted)[]).every(
        (key) => columns[key] === String(wanted[key]),
      );
      if (matches) return { value: columns };
      const pool = await getObject(stack, 'gpucellpool', name);
      return {
        notYet: `${JSON.stringify(columns)}; cells ${JSON.stringify(cellsOf(pool))}; ${conditionsLine(pool)}`,
      };
    },
    timeoutMs,
  );
}

export interface CellStatus {
  name: string;
  vm?: string;
  node?: string;
  systemUUID?: string;
  phase?: string;
  since?: string;
}

export function cellsOf(pool: ObjectWithStatus | undefined): CellStatus[] {
  return (pool?.status?.['cells'] as CellStatus[] | undefined) ?? [];
}

export function conditionsLine(pool: ObjectWithStatus | undefined): string {
  return (pool?.status?.conditions ?? [])
    .map((c) => `${c.type}=${c.status}/${c.reason ?? ''} (${c.message ?? ''})`)
    .join('; ');
}

export type Json = Record<string, unknown>;

/** The documents of samples/<file>, namespaced objects moved into `namespace`. */
export function samplesIn(file: string, namespace: string): Json[] {
  return parseAllDocuments(readFileSync(path.join(repoRoot, 'samples', file), 'utf8'))
    .map((document) => document.toJS() as Json | null)
    .filter((object): object is Json => object !== null)
    .map((object) => {
      const metadata = object['metadata'] as Json;
      return metadata['namespace'] === undefined
        ? object
        : { ...object, metadata: { ...metadata, namespace } };
    });
}

/** The one document of `kind` in samples/<file>, moved into `namespace`. */
export function sampleIn(file: string, kind: string, namespace: string): Json {
  const found = samplesIn(file, namespace).find((object) => object['kind'] === kind);
  if (!found) throw new Error(`samples/${file} has no ${kind}`);
  return found;
}

/**
 * A tenant's pod bound to a cell's Node that asks for a share of its GPU (HAMi's
 * `nvidia.com/gpu`). No scheduler or kubelet runs here: the pod stays Pending on that Node, which
 * is what a consumer pod holding the GPU looks like to the pool.
 */
export function consumerPod(namespace: string, name: string, nodeName: string): Json {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: {
      nodeName,
      containers: [
        {
          name: 'train',
          image: 'registry.example/cuda-train:12',
          resources: { limits: { 'nvidia.com/gpu': '1' } },
        },
      ],
    },
  };
}

/**
 * The tenant's pod ends. Without a kubelet nothing confirms a graceful deletion, so the pod is
 * removed at once (`--grace-period=0 --force`), as its kubelet would once the container exited.
 */
export async function endPod(stack: KubeCellStack, namespace: string, name: string) {
  await kubectl(stack, [
    'delete',
    'pod',
    name,
    '-n',
    namespace,
    '--grace-period=0',
    '--force',
    '--wait=false',
  ]);
}

export interface NodeObject extends ObjectWithStatus {
  spec?: {
    unschedulable?: boolean;
    providerID?: string;
    taints?: { key: string; effect: string; value?: string }[];
  };
}

/** Whether a Node is cordoned and carries the retiring taint. */
export function isRetiring(node: NodeObject | undefined): boolean {
  return (
    node?.spec?.unschedulable === true &&
    (node.spec.taints ?? []).some(
      (taint) => taint.key === 'kubecell.io/retiring' && taint.effect === 'NoSchedule',
    )
  );
}

/** The pool's owner reference on an adopted child, as Metacontroller sets it. */
export function controllerRefOf(
  object: ObjectWithStatus | undefined,
): { kind: string; name: string; uid: string; controller?: boolean } | undefined {
  return object?.metadata.ownerReferences?.find((ref) => ref.controller === true);
}

/** The labels a cell's kubelet registers its Node with (docs/cell-image.md). */
export function poolNodeLabels(
  pool: ObjectWithStatus,
  machineProfile: string,
): Record<string, string> {
  return {
    'controller-uid': pool.metadata.uid,
    'kubecell.io/machine-profile': machineProfile,
    'kubecell.io/pool': pool.metadata.name,
  };
}
