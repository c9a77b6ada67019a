/**
 * The Nodes of a pool's cells: which Node is a cell's current one, and the Node objects the pool
 * returns (identity only, or cordoned and tainted while its cell retires).
 *
 * A Node is the current Node of a cell when its systemUUID equals the cell's firmware UUID
 * (case-insensitively; of several, the one named like the machine, else the newest). Cluster
 * API: the Machine's nodeRef or providerID.
 */
import { nodeHealthAnnotations, nodeHealthOf, type NodeHealth } from '../api/node-health.js';
import type { GPUCellPool } from '../generated/types/index.js';
import { conditionIsTrue } from '../kube/objects.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { RETIRING_TAINT } from './constants.js';
import type { MachineObject, NodeObject } from './objects.js';
import { sameUuid } from './uuid.js';

/** What a cell incarnation's Node is found by. */
export interface NodeMatch {
  uuid: string;
  machine?: MachineObject | undefined;
  machineName: string;
}

export function nodeReady(node: NodeObject): boolean {
  return conditionIsTrue(node.status?.conditions ?? undefined, 'Ready');
}

/** The pool Node that is this cell's current Node. */
export function currentNode(
  pool: GPUCellPool,
  cell: NodeMatch,
  nodes: readonly NodeObject[],
): NodeObject | undefined {
  if (pool.spec.provisioner.type === 'ClusterAPI') {
    const nodeRef = cell.machine?.status?.nodeRef?.name;
    const providerID = cell.machine?.spec?.providerID;
    return nodes.find(
      (node) =>
        (nodeRef !== undefined && node.metadata.name === nodeRef) ||
        (typeof providerID === 'string' &&
          providerID !== '' &&
          node.spec?.providerID === providerID),
    );
  }
  // Several Nodes may report the incarnation's firmware UUID (the same VM registered again under
  // another name): the one named as the join data names it (NODE_NAME, the machine's name) is
  // current, otherwise the most recently registered; the others are stale and reaped.
  const reporting = nodes.filter((node) => sameUuid(node.status?.nodeInfo?.systemUUID, cell.uuid));
  return (
    reporting.find((node) => node.metadata.name === cell.machineName) ??
    [...reporting].sort(
      (a, b) =>
        (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '') ||
        (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0),
    )[0]
  );
}

/** A cell's health as the Node is marked with it (nodeHealthOf: undefined while Healthy). */
export type CellVerdict = { health: string; reason: string } | undefined;

/**
 * A Node the pool keeps. Only the fields the pool manages are returned: everything else
 * belongs to the kubelet and the node controllers, and returning it would make Metacontroller
 * write it back (an older copy, or with server-side apply, take it over). A cell that is not
 * Healthy marks its Node (`nodeMetadata`).
 */
export function keptNode(node: NodeObject, verdict?: CellVerdict): KubernetesObject {
  return { apiVersion: 'v1', kind: 'Node', metadata: nodeMetadata(node, verdict) };
}

/**
 * A retiring cell's Node: cordoned and tainted `kubecell.io/retiring:NoSchedule`, with the
 * taints it already has (the list is written whole), and marked as `keptNode` marks it.
 */
export function retiringNode(node: NodeObject, verdict?: CellVerdict): KubernetesObject {
  const taints = (node.spec?.taints ?? []).filter(
    (taint) => !(taint.key === RETIRING_TAINT.key && taint.effect === RETIRING_TAINT.effect),
  );
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: nodeMetadata(node, verdict),
    spec: {
      unschedulable: true,
      taints: [...taints, { key: RETIRING_TAINT.key, effect: RETIRING_TAINT.effect }],
    },
  } as KubernetesObject;
}

/** Metacontroller's record of what it last applied (dynamic apply only; pkg/dynamic/apply). */
const LAST_APPLIED = 'metacontroller.k8s.io/last-applied-configuration';

/**
 * The Node's name and, for a cell that is not Healthy, the annotations kubecell.io/cell-health
 * and kubecell.io/cell-health-reason (hooks/api/node-health.ts). Once the cell is Healthy again
 * they are left out and Metacontroller removes them: server-side apply drops the fields its field
 * manager applied before and no longer applies. Its dynamic apply instead deletes every key the
 * last applied configuration has and the desired object lacks (mergeObject,
 * metacontroller v4.17.2 pkg/dynamic/apply/apply.go), and would take every annotation of the Node
 * with a dropped `annotations` map: a Node whose last applied configuration has the map keeps
 * it, empty.
 */
function nodeMetadata(node: NodeObject, verdict: CellVerdict): KubernetesObject['metadata'] {
  const health: NodeHealth | undefined =
    verdict === undefined ? undefined : nodeHealthOf(verdict.health, verdict.reason);
  if (health !== undefined) {
    return { name: node.metadata.name, annotations: nodeHealthAnnotations(health) };
  }
  return lastAppliedAnnotations(node)
    ? { name: node.metadata.name, annotations: {} }
    : { name: node.metadata.name };
}

function lastAppliedAnnotations(node: NodeObject): boolean {
  const text = node.metadata.annotations?.[LAST_APPLIED];
  if (typeof text !== 'string') return false;
  try {
    const applied = JSON.parse(text) as { metadata?: { annotations?: unknown } } | null;
    return applied?.metadata?.annotations !== undefined;
  } catch {
    return false;
  }
}

/** Is the Node seen cordoned and tainted as `retiringNode` makes it? */
export function isRetiringNode(node: NodeObject): boolean {
  return (
    node.spec?.unschedulable === true &&
    (node.spec.taints ?? []).some(
      (taint) => taint.key === RETIRING_TAINT.key && taint.effect === RETIRING_TAINT.effect,
    )
  );
}
