/**
 * The render phase: the children a sync returns, cell by cell, then the Nodes.
 *
 * - A cell that is not retiring returns its machine (created only when the assess phase found
 *   nothing in the way), its user-data Secret (opaque bootstrap) and, for Cluster API, the
 *   clones of the templates until they are seen; its current Node is returned by name.
 * - A user-data Secret is rendered from the join Secret's current content until the cell's
 *   machine exists, and kept as observed from then on: a rotated join Secret reaches new machines
 *   only. Each is annotated with the content it came from (kubecell.io/join-content-hash), which
 *   the cell carries to its status (`joinContentHash`).
 * - Retirement, never eviction: the Node is cordoned and tainted kubecell.io/retiring:NoSchedule
 *   first; once the Node is seen cordoned and no consumer pod holds the GPU, the machine (and its
 *   user-data Secret) is left out, so Metacontroller deletes it; once the machine is gone, the
 *   Node is left out too. A cell without a Node has nothing to cordon and goes at once. A cell
 *   retired for its health (remediation.ts) retires the same way, except that past
 *   spec.health.releaseTimeoutSeconds its machine goes even while a pod holds the GPU.
 * - Any other pool Node is left out and so deleted: a Node of an earlier incarnation or of a
 *   removed cell is reaped and never counts as Ready.
 *
 * The objects themselves are rendered by machines.ts, clones.ts and nodes.ts.
 */
import { readNodeHealth } from '../api/node-health.js';
import type { GPUCellPool, GPUCellPoolStatus } from '../generated/types/index.js';
import { keptChild } from '../metacontroller/kept-child.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import type { Assessment } from './assess.js';
import { compareCells, identity, type Cell } from './cells.js';
import { renderClone } from './clones.js';
import {
  renderMachine,
  renderUserDataSecret,
  renderVirtualMachine,
  type CellIdentity,
} from './machines.js';
import { JOIN_CONTENT_HASH_ANNOTATION } from './constants.js';
import { isRetiringNode, keptNode, retiringNode } from './nodes.js';
import type { NodeObject, SecretObject } from './objects.js';
import type { ObservedChildren, PoolObservation } from './observe.js';
import { renderUserData } from './template.js';

export interface RenderInput {
  pool: GPUCellPool;
  /** Every cell after sizing, retiring ones included. */
  cells: readonly Cell[];
  children: ObservedChildren;
  observation: PoolObservation;
  assessment: Assessment;
  deleting: boolean;
}

export interface Rendered {
  children: KubernetesObject[];
  /** The cells still there, by ordinal, each with its phase after retirement. */
  cells: Cell[];
}

/** What one cell contributes: its children, its Node, and itself while anything of it is left. */
interface CellOutput {
  children: KubernetesObject[];
  node?: KubernetesObject;
  cell?: Cell;
}

export function renderChildren(input: RenderInput): Rendered {
  const outputs = [...input.cells]
    .sort(compareCells)
    .map((cell) => (cell.retiring ? retiringCell(input, cell) : activeCell(input, cell)));
  const cells = outputs.flatMap((output) => (output.cell ? [output.cell] : []));
  const nodes = new Map(
    outputs.flatMap((output) =>
      output.node ? [[output.node.metadata.name, output.node] as const] : [],
    ),
  );
  for (const node of otherKeptNodes(input, cells, nodes)) nodes.set(node.metadata.name, node);
  return {
    children: [
      ...outputs.flatMap((output) => output.children),
      ...[...nodes.keys()].sort().map((name) => nodes.get(name) as KubernetesObject),
    ],
    cells,
  };
}

function activeCell(input: RenderInput, cell: Cell): CellOutput {
  const own = cellChildren(input, cell, { clones: true });
  return {
    children: own.children,
    ...(cell.node ? { node: keptNode(cell.node, cell.health) } : {}),
    cell: withJoinContent(cell, own.joinContentHash),
  };
}

function withJoinContent(cell: Cell, joinContentHash: string | undefined): Cell {
  return joinContentHash === undefined ? cell : { ...cell, joinContentHash };
}

/**
 * A retiring cell. Cordon first: the machine goes only once the Node is seen cordoned and tainted
 * (so the scheduler places nothing new there) and no consumer pod is seen holding the GPU. A pod
 * bound just before the scale-down, which the pod cache may not show yet, is seen by then.
 */
function retiringCell(input: RenderInput, cell: Cell): CellOutput {
  const { machine, node } = cell;
  if (machine === undefined) {
    // The machine is gone; the Node (left out) is deleted, and the cell with it.
    return node === undefined ? { children: [] } : { children: [], cell: deleting(cell) };
  }
  if (node === undefined) return { children: [], cell: deleting(cell) };
  // A cell in remediation past spec.health.releaseTimeoutSeconds no longer waits for its GPU.
  const busy =
    cell.health?.releaseDue !== true && (cell.holders === undefined || cell.holders.length > 0);
  if (!busy && isRetiringNode(node)) {
    return { children: [], node: retiringNode(node, cell.health), cell: deleting(cell) };
  }
  // Kept, not created: the same rendering as for a live cell, without the clones.
  const retiring: Cell = { ...cell, phase: 'Retiring' };
  const own = cellChildren(input, retiring, { clones: false });
  return {
    children: own.children,
    node: retiringNode(node, cell.health),
    cell: withJoinContent(retiring, own.joinContentHash),
  };
}

function deleting(cell: Cell): Cell {
  return { ...cell, phase: 'Deleting' };
}

/** What a cell renders: its children, and the join content its user-data is from (if known). */
interface CellChildren {
  children: KubernetesObject[];
  joinContentHash?: string;
}

/** A cell's machine, user-data Secret and (unless told not to) Cluster API clones. */
function cellChildren(input: RenderInput, cell: Cell, options: { clones: boolean }): CellChildren {
  const id = identity(cell);
  const secret = input.children.secrets.get(id.secret);
  if (cell.machine === undefined && input.assessment.blocker.state !== 'ok') {
    // Nothing new is created; a Secret left from before is kept as it is.
    return secret !== undefined ? keptUserData(secret) : { children: [] };
  }
  const userData = userDataChild(input, cell, id, secret);
  return {
    children: [
      ...machineChild(input, cell, id),
      ...userData.children,
      ...(options.clones ? cloneChildren(input, cell, id) : []),
    ],
    ...(userData.joinContentHash !== undefined
      ? { joinContentHash: userData.joinContentHash }
      : {}),
  };
}

function clusterAPIOf(pool: GPUCellPool) {
  return pool.spec.provisioner.type === 'ClusterAPI' ? pool.spec.provisioner.clusterAPI : undefined;
}

/** A Cluster API Machine is rendered from names alone; a VM needs the GPU request. */
function machineChild(input: RenderInput, cell: Cell, id: CellIdentity): KubernetesObject[] {
  const requestName = input.assessment.machineInputs.requestName;
  if (clusterAPIOf(input.pool) !== undefined) return [renderMachine(input.pool, id)];
  if (requestName !== undefined) return [renderVirtualMachine(input.pool, id, requestName)];
  return cell.machine !== undefined ? [keptChild(cell.machine)] : [];
}

/** An observed user-data Secret kept as it is, with the join content hash it was stamped with. */
function keptUserData(secret: SecretObject): CellChildren {
  const stamped = secret.metadata.annotations?.[JOIN_CONTENT_HASH_ANNOTATION];
  return { children: [keptChild(secret)], ...(stamped ? { joinContentHash: stamped } : {}) };
}

/**
 * The user-data Secret, unless a Cluster API bootstrap provider supplies the data. Once the
 * cell's machine exists, its Secret is kept as observed: the machine keeps what it booted from,
 * and a rotated join Secret reaches new machines only. A Secret from before the annotation that
 * equals what the current content renders is stamped with the current hash; one that differs is
 * kept, its content unknown. A cell without a machine, or whose Secret is gone, renders from the
 * current content.
 */
function userDataChild(
  input: RenderInput,
  cell: Cell,
  id: CellIdentity,
  secret: SecretObject | undefined,
): CellChildren {
  const { pool } = input;
  if (clusterAPIOf(pool)?.bootstrapConfigTemplateRef !== undefined) return { children: [] };
  const { join, contentHash } = input.assessment.bootstrap;
  const renderable = join !== undefined && contentHash !== undefined;
  // Rendered only where it is used: a stamped Secret of a running cell is kept unread.
  const render = () =>
    renderable
      ? renderUserDataSecret(
          pool,
          id,
          renderUserData(join, {
            cellName: cell.name,
            nodeName: cell.machineName,
            poolName: pool.metadata.name,
            poolUid: pool.metadata.uid ?? '',
            machineProfile: pool.spec.machineProfile,
          }),
          contentHash,
        )
      : undefined;
  if (secret !== undefined && (cell.machine !== undefined || !renderable)) {
    const unstamped = secret.metadata.annotations?.[JOIN_CONTENT_HASH_ANNOTATION] === undefined;
    const rendered = unstamped ? render() : undefined;
    if (rendered !== undefined && sameData(secret, rendered)) {
      return { children: [rendered], joinContentHash: contentHash };
    }
    return keptUserData(secret);
  }
  const rendered = render();
  return rendered === undefined
    ? { children: [] }
    : { children: [rendered], joinContentHash: contentHash };
}

/** The same keys with the same values. */
function sameData(observed: SecretObject, rendered: KubernetesObject): boolean {
  const a = observed.data ?? {};
  const b = (rendered as { data?: Record<string, string> }).data ?? {};
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

/**
 * The Cluster API clones, with the Machine and until they are seen: from then on they belong to
 * the Machine (Cluster API makes it their controller and deletes them with it). Never for a
 * Machine being deleted, whose clones Cluster API is deleting.
 */
function cloneChildren(input: RenderInput, cell: Cell, id: CellIdentity): KubernetesObject[] {
  const capi = clusterAPIOf(input.pool);
  if (capi === undefined || cell.machine?.metadata.deletionTimestamp !== undefined) return [];
  const { observation } = input;
  const roles = [
    {
      ref: capi.bootstrapConfigTemplateRef,
      template: observation.bootstrapTemplate.object,
      clones: observation.bootstrapClones,
    },
    {
      ref: capi.infrastructureTemplateRef,
      template: observation.infrastructureTemplate.object,
      clones: observation.infrastructureClones,
    },
  ];
  return roles.flatMap(({ ref, template, clones }) =>
    ref === undefined ||
    template === undefined ||
    clones === undefined ||
    clones.has(cell.machineName)
      ? []
      : [renderClone(input.pool, id, ref, template)],
  );
}

/**
 * Pool Nodes that are no cell's but are kept as they are: a Node that has not reported its
 * systemUUID yet (KubeVirt), and, for Cluster API, every Node while some Machine has neither a
 * providerID nor a nodeRef to match it by. None while the pool is being deleted.
 */
function otherKeptNodes(
  input: RenderInput,
  cells: readonly Cell[],
  kept: ReadonlyMap<string, KubernetesObject>,
): KubernetesObject[] {
  if (input.deleting) return [];
  const type = input.pool.spec.provisioner.type;
  const unmatchedGrace =
    type === 'ClusterAPI' &&
    cells.some(
      (cell) =>
        !cell.retiring &&
        cell.machine !== undefined &&
        !cell.machine.spec?.providerID &&
        !cell.machine.status?.nodeRef?.name,
    );
  const unreported = (node: NodeObject) =>
    type === 'KubeVirt' && !node.status?.nodeInfo?.systemUUID;
  return input.children.nodes
    .filter((node) => !kept.has(node.metadata.name) && (unmatchedGrace || unreported(node)))
    .map((node) => keptNode(node));
}

/**
 * Every observed child as it is, for a sync that keeps everything. A Node of a cell that was
 * retiring keeps its cordon and taint: both GPUCellPool controllers apply as the same field
 * manager, and a Node returned by name only would lose them. A Node keeps its health marks too.
 */
export function heldChildren(
  previous: GPUCellPoolStatus,
  allChildren: readonly KubernetesObject[],
): KubernetesObject[] {
  const retiring = new Set(
    (previous.cells ?? [])
      .filter((cell) => cell.phase === 'Retiring' || cell.phase === 'Deleting')
      .map((cell) => cell.node)
      .filter((node): node is string => node !== undefined),
  );
  return allChildren.map((child) =>
    child.kind === 'Node'
      ? retiring.has(child.metadata.name)
        ? retiringNode(child as NodeObject, readNodeHealth(child.metadata.annotations))
        : keptNode(child as NodeObject, readNodeHealth(child.metadata.annotations))
      : keptChild(child),
  );
}
