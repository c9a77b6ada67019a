/**
 * The GPUCellPool sync and finalize hooks, called by both GPUCellPool controllers.
 *
 * Sync, in order:
 * 0. Whose pool. A controller whose child types do not include the pool's machine kind is the
 *    other provisioner's, reached through a `kubecell.io/provisioner` label that contradicts
 *    spec.provisioner.type: it keeps every child it observes as it is and says so in `Ready`
 *    (`ProvisionerLabelMismatch`), and its finalize lets go at once. A finalize call without a
 *    deletion means the pool stopped matching this controller's labelSelector: everything is
 *    kept (`ProvisionerLabelMissing` or `ProvisionerLabelMismatch`) and the finalizer stays, so
 *    that a label edit never tears GPU cells down (provisioner.ts).
 * 1. Observe. Without the pool's machines, Secrets or Nodes in the request, every observed child
 *    is returned as it is and the status is kept: nothing is created or deleted on a guess.
 * 2. Bootstrap and GPU: the join Secret's template (or the Cluster API bootstrap template), the
 *    GPU claim's device request, the Cluster API infrastructure template. A cell whose machine
 *    does not exist yet is created only when all of them are usable; existing children are kept
 *    as observed otherwise. A kind the apiserver does not serve (left out by the customize hook)
 *    is reported as `KindNotServed`, naming the kind and the fix.
 * 3. Cells, from `status.cells` (the only memory): each cell's machine and current Node. A cell
 *    that had joined and whose machine has disappeared gets a new incarnation (new machine name,
 *    new firmware UUID, new Node name).
 * 4. Size: spec.replicas, or the autoscaler's decision. Missing cells are added (lowest free
 *    ordinal); surplus cells are retired: not Ready ones first, then idle, then busy, newest
 *    first (the autoscaler names its own choice: idle past the delay, newest first).
 * 5. Retirement, never eviction: the Node is cordoned and tainted kubecell.io/retiring:NoSchedule
 *    first; once the Node is seen cordoned and no consumer pod holds the GPU, the machine (and its
 *    user-data Secret) is left out, so Metacontroller deletes it; once the machine is gone, the
 *    Node is left out too. A cell without a Node has nothing to cordon and goes at once.
 * 6. Nodes: a Node is the current Node of a cell when its systemUUID equals the cell's firmware
 *    UUID (case-insensitively; of several, the one named like the machine, else the newest;
 *    Cluster API: the Machine's nodeRef or providerID). Current Nodes
 *    are returned (identity only); any other pool Node is left out and so deleted: a Node of an
 *    earlier incarnation or of a removed cell is reaped and never counts as Ready.
 * 7. Status, returned whole; for the same request and clock it is byte-identical.
 *
 * Finalize runs the same with a desired size of 0 and answers `finalized: true` once every cell
 * and child is gone (at once with the annotation `kubecell.io/skip-cleanup=true`).
 */
import { keptChild } from '../metacontroller/kept-child.js';
import type {
  GPUCellPool,
  GPUCellPoolStatus,
  GPUCellStatus,
  TypedObjectReference,
} from '../generated/types/index.js';
import { conditionIsTrue } from '../kube/objects.js';
import { ANNOTATIONS } from '../kube/labels.js';
import type {
  CompositeSyncRequest,
  CompositeSyncResponse,
  KubernetesObject,
} from '../metacontroller/protocol.js';
import {
  formatTime,
  reconcileConditions,
  verdict,
  type ConditionVerdict,
} from '../status/conditions.js';
import { clamp, decideScale, type AutoscaleDecision } from './autoscale.js';
import type { GPUCellPoolConfig } from './config.js';
import {
  API_VERSIONS,
  FINALIZE_RESYNC_SECONDS,
  LABEL_KEYS,
  MAX_CELLS,
  SPEC_DEFAULTS,
  type CellPhase,
} from './constants.js';
import { BOOTSTRAP_REASONS, READY_REASONS, SCALING_REASONS } from './reasons.js';
import { holdersByNode, pendingDemand } from './consumers.js';
import {
  cellName,
  cellOrdinal,
  clonedKind,
  incarnationOf,
  machineName,
  userDataSecretName,
} from './names.js';
import type { MachineObject, NodeObject } from './objects.js';
import { gpuRequestName, observePool, type PoolObservation } from './observe.js';
import {
  controllerProvisioners,
  provisionerLabelProblem,
  type ProvisionerLabelProblem,
} from './provisioner.js';
import {
  isRetiringNode,
  keptNode,
  renderClone,
  renderMachine,
  renderUserDataSecret,
  renderVirtualMachine,
  retiringNode,
  type CellIdentity,
} from './render.js';
import {
  describeProblem,
  readJoinSecret,
  renderUserData,
  type JoinData,
  type JoinProblem,
} from './template.js';
import { firmwareUuid, sameUuid } from './uuid.js';

const CELL_PHASE_SET = new Set<string>([
  'Provisioning',
  'NotReady',
  'Ready',
  'Retiring',
  'Deleting',
  'Failed',
]);

/** Can new machines be created, and if not, why (a verdict for a condition). */
type Readiness =
  | { state: 'ok' }
  | { state: 'invalid'; reason: string; message: string }
  | { state: 'unknown'; reason: string; message: string };

interface Bootstrap {
  verdict: ConditionVerdict;
  /** Opaque bootstrap: the join data, when usable. */
  join?: JoinData;
  readiness: Readiness;
}

function assessBootstrap(pool: GPUCellPool, observation: PoolObservation): Bootstrap {
  const { spec } = pool;
  const namespace = spec.namespace;
  const capi = spec.provisioner.clusterAPI;
  if (spec.provisioner.type === 'ClusterAPI' && capi?.bootstrapConfigTemplateRef !== undefined) {
    const ref = capi.bootstrapConfigTemplateRef;
    const where = `${ref.kind} ${namespace}/${ref.name}`;
    const notServed = !observation.bootstrapTemplate.observed
      ? templateNotServed(ref, namespace, 'bootstrapConfigTemplateRef')
      : observation.bootstrapClones === undefined
        ? cloneNotServed(ref, namespace)
        : undefined;
    if (notServed !== undefined) {
      return {
        verdict: verdict('BootstrapValid', 'False', BOOTSTRAP_REASONS.KindNotServed, notServed),
        readiness: { state: 'invalid', reason: READY_REASONS.KindNotServed, message: notServed },
      };
    }
    if (observation.bootstrapTemplate.object === undefined) {
      const message = `${where} does not exist; no machine is created`;
      return {
        verdict: verdict(
          'BootstrapValid',
          'False',
          BOOTSTRAP_REASONS.BootstrapTemplateNotFound,
          message,
        ),
        readiness: { state: 'invalid', reason: READY_REASONS.BootstrapInvalid, message },
      };
    }
    return {
      verdict: verdict(
        'BootstrapValid',
        'True',
        BOOTSTRAP_REASONS.ClusterAPIBootstrap,
        `the Cluster API bootstrap provider supplies the join data (cloned from ${where})`,
      ),
      readiness: { state: 'ok' },
    };
  }
  const secretName = spec.bootstrap?.joinSecretRef?.name ?? '';
  const where = `${namespace}/${secretName}`;
  if (!observation.joinSecret.observed) {
    const message = `the join Secret ${where} was not observed`;
    return {
      verdict: verdict('BootstrapValid', 'Unknown', BOOTSTRAP_REASONS.NotObserved, message),
      readiness: { state: 'unknown', reason: READY_REASONS.NotObserved, message },
    };
  }
  const secret = observation.joinSecret.object;
  if (secret === undefined) {
    const message = `the join Secret ${where} does not exist; no machine is created`;
    return {
      verdict: verdict('BootstrapValid', 'False', BOOTSTRAP_REASONS.JoinSecretNotFound, message),
      readiness: { state: 'invalid', reason: READY_REASONS.BootstrapInvalid, message },
    };
  }
  const read = readJoinSecret(secret.data);
  if (!read.ok) {
    const message = describeProblem(read.problem, where);
    return {
      verdict: verdict('BootstrapValid', 'False', problemReason(read.problem), message),
      readiness: { state: 'invalid', reason: READY_REASONS.BootstrapInvalid, message },
    };
  }
  return {
    verdict: verdict(
      'BootstrapValid',
      'True',
      BOOTSTRAP_REASONS.TemplateValid,
      `the user-data template of Secret ${where} uses ${read.join.template.used.length === 0 ? 'no variables' : read.join.template.used.join(', ')}`,
    ),
    join: read.join,
    readiness: { state: 'ok' },
  };
}

function problemReason(problem: JoinProblem): string {
  switch (problem.kind) {
    case 'unknownVariable':
      return BOOTSTRAP_REASONS.UnknownVariable;
    case 'missingKey':
      return BOOTSTRAP_REASONS.JoinSecretKeyMissing;
    case 'invalidValue':
      return BOOTSTRAP_REASONS.JoinSecretValueInvalid;
  }
}

/**
 * When a kind is not served. The customize hook leaves out every kind API discovery says the
 * apiserver does not serve (customize.ts), and Metacontroller delivers every group the customize
 * answer asked for, empty or not, or fails the whole sync (pkg/controller/common/customize/
 * manager.go, `GetRelatedObjects`): so a template, clone or claim group missing from `related` is
 * a kind that is not served.
 */
const UNTIL_SERVED =
  'no machine is created until it is (the pool sees a kind installed later within 20 minutes, ' +
  'when Metacontroller asks the customize hook again, or at once after a change to its spec)';

function templateNotServed(
  ref: TypedObjectReference,
  namespace: string,
  field: 'bootstrapConfigTemplateRef' | 'infrastructureTemplateRef',
): string {
  return (
    `kind ${ref.kind} is not served by the apiserver in ${ref.apiVersion}, so the template ` +
    `${namespace}/${ref.name} (spec.provisioner.clusterAPI.${field}) cannot be read: install the ` +
    `Cluster API provider that defines it (its CRD), or name a template of a served kind; ` +
    UNTIL_SERVED
  );
}

function cloneNotServed(ref: TypedObjectReference, namespace: string): string {
  const kind = clonedKind(ref.kind);
  return (
    `kind ${kind} is not served by the apiserver in ${ref.apiVersion}, so the template ` +
    `${ref.kind} ${namespace}/${ref.name} cannot be cloned for a cell: install the CRD of ` +
    `${kind} (the provider of ${ref.kind} defines both); ${UNTIL_SERVED}`
  );
}

/** The GPU (KubeVirt) or the infrastructure template (Cluster API) new machines need. */
function assessMachineInputs(
  pool: GPUCellPool,
  observation: PoolObservation,
): { readiness: Readiness; requestName?: string } {
  const { spec } = pool;
  const namespace = spec.namespace;
  if (spec.provisioner.type === 'ClusterAPI') {
    const ref = spec.provisioner.clusterAPI?.infrastructureTemplateRef;
    const where = `${ref?.kind ?? ''} ${namespace}/${ref?.name ?? ''}`;
    const notServed =
      ref === undefined
        ? undefined
        : !observation.infrastructureTemplate.observed
          ? templateNotServed(ref, namespace, 'infrastructureTemplateRef')
          : observation.infrastructureClones === undefined
            ? cloneNotServed(ref, namespace)
            : undefined;
    if (notServed !== undefined) {
      return {
        readiness: { state: 'invalid', reason: READY_REASONS.KindNotServed, message: notServed },
      };
    }
    if (observation.infrastructureTemplate.object === undefined) {
      return {
        readiness: {
          state: 'invalid',
          reason: READY_REASONS.MachineTemplateNotFound,
          message: `${where} does not exist; no machine is created`,
        },
      };
    }
    return { readiness: { state: 'ok' } };
  }
  const named = spec.gpu.resourceClaimName !== undefined;
  const kind = named ? 'ResourceClaim' : 'ResourceClaimTemplate';
  const name = spec.gpu.resourceClaimName ?? spec.gpu.resourceClaimTemplateName ?? '';
  const where = `${kind} ${namespace}/${name}`;
  if (!observation.claim.observed) {
    return {
      readiness: {
        state: 'invalid',
        reason: READY_REASONS.KindNotServed,
        message:
          `kind ${kind} is not served by the apiserver in ${API_VERSIONS.resource}, so the GPU's ` +
          `${where} cannot be read: Dynamic Resource Allocation serves ${API_VERSIONS.resource} ` +
          `from Kubernetes 1.34 on; ${UNTIL_SERVED}`,
      },
    };
  }
  const requestName = gpuRequestName(observation.claim.object);
  if (observation.claim.object === undefined || requestName === undefined) {
    return {
      readiness: {
        state: 'invalid',
        reason: READY_REASONS.GPUClaimNotFound,
        message:
          observation.claim.object === undefined
            ? `${where} does not exist; no machine is created`
            : `${where} has no device request to give the VM; no machine is created`,
      },
    };
  }
  return { readiness: { state: 'ok' }, requestName };
}

// --- cells ---

interface Cell {
  name: string;
  ordinal: number;
  incarnation: number;
  machineName: string;
  uuid: string;
  /** The phase recorded before this sync (undefined for a new cell). */
  previousPhase?: CellPhase;
  previousSince?: string;
  retiring: boolean;
  machine?: MachineObject;
  node?: NodeObject;
  /** Consumer pods holding the GPU; undefined when pods were not observed. */
  holders?: string[];
  phase: CellPhase;
}

function previousCells(pool: GPUCellPool): GPUCellStatus[] {
  const cells = pool.status?.cells;
  if (!Array.isArray(cells)) return [];
  const seen = new Set<string>();
  return cells.filter((cell): cell is GPUCellStatus => {
    const ok =
      typeof cell === 'object' &&
      cell !== null &&
      typeof cell.name === 'string' &&
      cell.name !== '' &&
      !seen.has(cell.name);
    if (ok) seen.add(cell.name);
    return ok;
  });
}

function identity(cell: Cell): CellIdentity {
  return {
    cell: cell.name,
    machine: cell.machineName,
    uuid: cell.uuid,
    secret: userDataSecretName(cell.machineName),
  };
}

function compareCells(a: Cell, b: Cell): number {
  return a.ordinal - b.ordinal || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

function nodeReady(node: NodeObject): boolean {
  return conditionIsTrue(node.status?.conditions, 'Ready');
}

/** The pool Node that is this cell's current Node. */
function currentNode(
  pool: GPUCellPool,
  cell: Pick<Cell, 'uuid' | 'machine' | 'machineName'>,
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

function uuidFor(pool: GPUCellPool, name: string, incarnation: number): string {
  return firmwareUuid(pool.metadata.uid ?? '', name, incarnation);
}

/** Retirement order: not Ready first, then idle, then busy; newest (highest ordinal) first. */
function retirementRank(cell: Cell): number {
  switch (cell.phase) {
    case 'Failed':
      return 0;
    case 'Provisioning':
      return 1;
    case 'NotReady':
      return 2;
    default:
      return (cell.holders?.length ?? 0) === 0 ? 3 : 4;
  }
}

// --- the hook ---

export interface SyncOptions {
  config: GPUCellPoolConfig;
  now: Date;
  finalizing: boolean;
}

export interface PoolSync {
  response: CompositeSyncResponse;
  /** Cells and children still there (for finalize). */
  remaining: number;
  /**
   * Finalize only: the answer when it does not follow from `remaining` (a pool this controller
   * holds for a label, or lets go of because it is another provisioner's).
   */
  finalized?: boolean;
}

export function syncGPUCellPool(
  request: CompositeSyncRequest<GPUCellPool>,
  config: GPUCellPoolConfig,
  now: Date,
): CompositeSyncResponse {
  return reconcilePool(request, { config, now, finalizing: false }).response;
}

export function finalizeGPUCellPool(
  request: CompositeSyncRequest<GPUCellPool>,
  config: GPUCellPoolConfig,
  now: Date,
): CompositeSyncResponse {
  const skip = request.parent.metadata.annotations?.[ANNOTATIONS.skipCleanup] === 'true';
  const result = reconcilePool(request, { config, now, finalizing: true });
  const { response, remaining } = result;
  if (result.finalized !== undefined) return { ...response, finalized: result.finalized };
  const finalized = skip || remaining === 0;
  const { resyncAfterSeconds, ...rest } = response;
  return {
    ...rest,
    finalized,
    ...(finalized ? {} : { resyncAfterSeconds: resyncAfterSeconds ?? FINALIZE_RESYNC_SECONDS }),
  };
}

export function reconcilePool(
  request: CompositeSyncRequest<GPUCellPool>,
  options: SyncOptions,
): PoolSync {
  const { config, now, finalizing } = options;
  const pool = request.parent;
  const { spec } = pool;
  const previous: GPUCellPoolStatus =
    typeof pool.status === 'object' && pool.status !== null ? pool.status : {};
  const generation = pool.metadata.generation;
  const deleting = finalizing || pool.metadata.deletionTimestamp !== undefined;
  const observation = observePool(pool, request.children, request.related, config);

  // 0. Is the pool this controller's? Both controllers call these hooks (provisioner.ts).
  const runs = controllerProvisioners(request.children);
  const labelProblem = provisionerLabelProblem(pool);
  if (runs.size > 0 && !runs.has(spec.provisioner.type)) {
    // The controller of the other provisioner, reached through a label that contradicts the type
    // (or a labelSelector edited by hand): it keeps every child it observes as it is, reports the
    // label, and lets go (finalized) as soon as it is asked to.
    const held = holdEverything(pool, previous, observation, now, labelProblem ?? 'asIs');
    return finalizing ? { ...held, finalized: true } : held;
  }
  if (finalizing && pool.metadata.deletionTimestamp === undefined) {
    // Finalize without a deletion: the pool carries this controller's finalizer but stopped
    // matching its labelSelector (the label was removed or changed by hand; Metacontroller's
    // shouldCallFinalizeHook). GPU cells are not torn down for a label: everything is kept and
    // the finalizer stays until the label is back (or kubecell.io/skip-cleanup=true lets go).
    const skip = pool.metadata.annotations?.[ANNOTATIONS.skipCleanup] === 'true';
    return {
      ...holdEverything(pool, previous, observation, now, labelProblem ?? 'asIs'),
      finalized: skip,
    };
  }

  // 1. Without the children groups, hold everything as it is.
  if (
    observation.machines === undefined ||
    observation.secrets === undefined ||
    observation.nodes === undefined
  ) {
    return holdEverything(pool, previous, observation, now);
  }
  const { machines, secrets, nodes } = observation;

  // 2. What new machines need.
  const bootstrap = assessBootstrap(pool, observation);
  const machineInputs = assessMachineInputs(pool, observation);
  const blocker: Readiness =
    bootstrap.readiness.state !== 'ok' ? bootstrap.readiness : machineInputs.readiness;

  // 3. Cells from status.
  const holders =
    observation.consumerPods && holdersByNode(observation.consumerPods, config.gpuResource);
  /** A cell with its machine, current Node and the consumer pods holding its GPU. */
  const buildCell = (
    name: string,
    incarnation: number,
    recorded: Partial<Pick<Cell, 'previousPhase' | 'previousSince' | 'uuid'>> = {},
    retiring = false,
  ): Cell => {
    const machine = machines.get(machineName(name, incarnation));
    const cell: Cell = {
      name,
      ordinal: cellOrdinal(pool.metadata.name, name) ?? Number.MAX_SAFE_INTEGER,
      incarnation,
      machineName: machineName(name, incarnation),
      uuid:
        spec.provisioner.type === 'ClusterAPI'
          ? (recorded.uuid ?? '')
          : uuidFor(pool, name, incarnation),
      ...(recorded.previousPhase !== undefined ? { previousPhase: recorded.previousPhase } : {}),
      ...(recorded.previousSince !== undefined ? { previousSince: recorded.previousSince } : {}),
      retiring,
      ...(machine ? { machine } : {}),
      phase: recorded.previousPhase ?? 'Provisioning',
    };
    const node = currentNode(pool, cell, nodes);
    if (node) cell.node = node;
    if (holders) cell.holders = node ? (holders.get(node.metadata.name) ?? []) : [];
    cell.phase = retiring ? cell.phase : activePhase(cell, blocker);
    return cell;
  };
  const cells: Cell[] = [];
  for (const recorded of previousCells(pool)) {
    const incarnation = incarnationOf(recorded.name, recorded.vm) ?? 0;
    const previousPhase = CELL_PHASE_SET.has(String(recorded.phase))
      ? (recorded.phase as CellPhase)
      : undefined;
    const retiring = previousPhase === 'Retiring' || previousPhase === 'Deleting';
    const lost =
      !retiring &&
      !machines.has(machineName(recorded.name, incarnation)) &&
      (previousPhase === 'Ready' || previousPhase === 'NotReady');
    cells.push(
      lost
        ? // The machine of a cell that had joined is gone: start a new incarnation, whose Node
          // will have another name and firmware UUID than the one left behind.
          buildCell(recorded.name, incarnation + 1)
        : buildCell(
            recorded.name,
            incarnation,
            {
              ...(previousPhase !== undefined ? { previousPhase } : {}),
              ...(recorded.since !== undefined ? { previousSince: recorded.since } : {}),
              ...(recorded.systemUUID !== undefined ? { uuid: recorded.systemUUID } : {}),
            },
            retiring,
          ),
    );
  }
  // A machine of this pool whose cell the status does not list (the status was lost or
  // rewritten) is taken back as its cell rather than deleted with its Node.
  const listed = new Set(cells.map((cell) => cell.name));
  const orphans = new Map<string, number>();
  for (const machine of machines.values()) {
    const name = machine.metadata.labels?.[LABEL_KEYS.cell];
    if (
      name === undefined ||
      listed.has(name) ||
      cellOrdinal(pool.metadata.name, name) === undefined
    )
      continue;
    const incarnation = incarnationOf(name, machine.metadata.name);
    if (incarnation === undefined) continue;
    orphans.set(name, Math.max(incarnation, orphans.get(name) ?? incarnation));
  }
  for (const [name, incarnation] of [...orphans].sort(([a], [b]) => (a < b ? -1 : 1))) {
    cells.push(buildCell(name, incarnation));
  }

  // 4. Size.
  const active = () => cells.filter((cell) => !cell.retiring);
  const scaling = decideSize(pool, previous, active(), observation, config, now, deleting);
  const desired = scaling.desired;
  const toAdd = desired - active().length;
  if (toAdd > 0) {
    const used = new Set(cells.map((cell) => cell.ordinal));
    for (let ordinal = 0, added = 0; added < toAdd && cells.length < MAX_CELLS; ordinal++) {
      if (used.has(ordinal)) continue;
      cells.push(buildCell(cellName(pool.metadata.name, ordinal), 0));
      added += 1;
    }
  } else if (toAdd < 0) {
    const preferred = new Map(scaling.retire.map((name, index) => [name, index]));
    const victims = active()
      .sort(
        (a, b) =>
          (preferred.get(a.name) ?? Infinity) - (preferred.get(b.name) ?? Infinity) ||
          retirementRank(a) - retirementRank(b) ||
          b.ordinal - a.ordinal,
      )
      .slice(0, -toAdd);
    for (const cell of victims) {
      cell.retiring = true;
      cell.phase = 'Retiring';
    }
  }

  // 5. Children of each cell, retirement, and the Nodes.
  const children: KubernetesObject[] = [];
  const keptNodes = new Map<string, KubernetesObject>();
  const survivors: Cell[] = [];
  for (const cell of cells.sort(compareCells)) {
    const id = identity(cell);
    const secret = secrets.get(id.secret);
    if (!cell.retiring) {
      children.push(
        ...activeChildren(pool, cell, id, secret, observation, bootstrap, machineInputs, blocker),
      );
      if (cell.node) keptNodes.set(cell.node.metadata.name, keptNode(cell.node));
      survivors.push(cell);
      continue;
    }
    const busy = cell.holders === undefined || cell.holders.length > 0;
    // Cordon first: the machine goes only once the Node is seen cordoned and tainted (so the
    // scheduler places nothing new there) and no consumer pod is seen holding the GPU. A pod bound
    // just before the scale-down, which the pod cache may not show yet, is seen by then.
    const cordoned = cell.node !== undefined && isRetiringNode(cell.node);
    if (cell.machine !== undefined && cell.node !== undefined && (busy || !cordoned)) {
      // Kept, not created: the same rendering as for a live cell, without the clones.
      cell.phase = 'Retiring';
      children.push(
        ...activeChildren(pool, cell, id, secret, observation, bootstrap, machineInputs, blocker, {
          clones: false,
        }),
      );
    } else if (cell.machine !== undefined) {
      cell.phase = 'Deleting';
    }
    if (cell.node !== undefined && cell.machine !== undefined) {
      keptNodes.set(cell.node.metadata.name, retiringNode(cell.node));
    }
    if (cell.machine !== undefined || cell.node !== undefined) {
      if (cell.machine === undefined) cell.phase = 'Deleting';
      survivors.push(cell);
    }
  }
  // Any other pool Node is stale: it is left out, and so deleted. Exceptions that are kept as
  // they are: a Node that has not reported its systemUUID yet (KubeVirt), and, for Cluster API,
  // every Node while some Machine has neither a providerID nor a nodeRef to match it by.
  const unmatchedGrace =
    spec.provisioner.type === 'ClusterAPI' &&
    survivors.some(
      (cell) =>
        !cell.retiring &&
        cell.machine !== undefined &&
        !cell.machine.spec?.providerID &&
        !cell.machine.status?.nodeRef?.name,
    );
  for (const node of nodes) {
    if (keptNodes.has(node.metadata.name)) continue;
    const unreported = spec.provisioner.type === 'KubeVirt' && !node.status?.nodeInfo?.systemUUID;
    if (!deleting && (unreported || unmatchedGrace)) {
      keptNodes.set(node.metadata.name, keptNode(node));
    }
  }
  children.push(
    ...[...keptNodes.keys()].sort().map((name) => keptNodes.get(name) as KubernetesObject),
  );

  // 6. Status.
  const cellStatuses = survivors.map((cell) =>
    cellStatus(cell, spec.provisioner.type === 'ClusterAPI', now),
  );
  const activeCells = survivors.filter((cell) => !cell.retiring);
  const readyReplicas = cellStatuses.filter((cell) => cell.phase === 'Ready').length;
  // A cell exists once its machine does: a cell still waiting for its machine (or one whose
  // machine is gone while its Node is being reaped) is listed, but not counted as current.
  const replicas = survivors.filter((cell) => cell.machine !== undefined).length;
  const verdicts: ConditionVerdict[] = [
    readyVerdict(deleting, activeCells, desired, blocker),
    verdict('ScalingActive', scaling.status, scaling.reason, scaling.message),
    bootstrap.verdict,
  ];
  const status: GPUCellPoolStatus = {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    replicas,
    readyReplicas,
    desiredReplicas: desired,
    cells: cellStatuses,
    conditions: reconcileConditions(previous.conditions, verdicts, now, generation),
  };
  return {
    response: {
      status,
      children,
      ...(scaling.resyncAfterSeconds !== undefined
        ? { resyncAfterSeconds: scaling.resyncAfterSeconds }
        : {}),
    },
    remaining: cellStatuses.length + observation.allChildren.length,
  };
}

/** The phase of a cell that is not retiring, from what is observed. */
function activePhase(cell: Cell, blocker: Readiness): CellPhase {
  if (cell.node) return nodeReady(cell.node) ? 'Ready' : 'NotReady';
  if (cell.machine === undefined && blocker.state === 'invalid') return 'Failed';
  return 'Provisioning';
}

function activeChildren(
  pool: GPUCellPool,
  cell: Cell,
  id: CellIdentity,
  secret: KubernetesObject | undefined,
  observation: PoolObservation,
  bootstrap: Bootstrap,
  machineInputs: { readiness: Readiness; requestName?: string },
  blocker: Readiness,
  options: { clones: boolean } = { clones: true },
): KubernetesObject[] {
  const { spec } = pool;
  const capi = spec.provisioner.type === 'ClusterAPI' ? spec.provisioner.clusterAPI : undefined;
  const opaque = capi === undefined || capi.bootstrapConfigTemplateRef === undefined;
  const out: KubernetesObject[] = [];
  // The machine. A Cluster API Machine is rendered from names alone; a VM needs the GPU request.
  if (cell.machine === undefined && blocker.state !== 'ok') {
    // Nothing new is created; a Secret left from before is kept as it is.
    return secret !== undefined ? [keptChild(secret)] : [];
  }
  if (capi !== undefined) {
    out.push(renderMachine(pool, id));
  } else if (machineInputs.requestName !== undefined) {
    out.push(renderVirtualMachine(pool, id, machineInputs.requestName));
  } else if (cell.machine !== undefined) {
    out.push(keptChild(cell.machine));
  }
  // The user-data Secret.
  if (opaque) {
    if (bootstrap.join !== undefined) {
      const userData = renderUserData(bootstrap.join, {
        cellName: cell.name,
        nodeName: cell.machineName,
        poolName: pool.metadata.name,
        poolUid: pool.metadata.uid ?? '',
        machineProfile: spec.machineProfile,
      });
      out.push(renderUserDataSecret(pool, id, userData));
    } else if (secret !== undefined) {
      out.push(keptChild(secret));
    }
  }
  // The Cluster API clones, with the Machine and until they are seen: from then on they belong to
  // the Machine (Cluster API makes it their controller and deletes them with it). Never for a
  // Machine being deleted, whose clones Cluster API is deleting.
  if (
    options.clones &&
    capi !== undefined &&
    cell.machine?.metadata.deletionTimestamp === undefined
  ) {
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
    for (const { ref, template, clones } of roles) {
      if (ref === undefined || template === undefined || clones === undefined) continue;
      if (clones.has(cell.machineName)) continue;
      out.push(renderClone(pool, id, ref, template));
    }
  }
  return out;
}

function cellStatus(cell: Cell, clusterAPI: boolean, now: Date): GPUCellStatus {
  const samePhase = cell.previousPhase === cell.phase;
  let since: string | undefined = samePhase ? cell.previousSince : formatTime(now);
  if (cell.phase === 'Ready' && cell.holders !== undefined) {
    // A Ready cell's `since` is when its GPU was last seen idle; absent while a consumer pod
    // holds it. That is the memory the autoscaler's scale-down delay is measured with.
    if (cell.holders.length > 0) since = undefined;
    else if (!samePhase || cell.previousSince === undefined) since = formatTime(now);
  }
  // KubeVirt: the UUID the pool gave the incarnation. Cluster API: what its Node reports (the
  // infrastructure provider decides it), kept while the Node is away.
  const reported = cell.node?.status?.nodeInfo?.systemUUID;
  const systemUUID = clusterAPI ? (reported ?? cell.uuid) : cell.uuid;
  return {
    name: cell.name,
    vm: cell.machineName,
    ...(cell.node ? { node: cell.node.metadata.name } : {}),
    ...(systemUUID ? { systemUUID } : {}),
    phase: cell.phase,
    ...(since !== undefined ? { since } : {}),
  };
}

function decideSize(
  pool: GPUCellPool,
  previous: GPUCellPoolStatus,
  active: readonly Cell[],
  observation: PoolObservation,
  config: GPUCellPoolConfig,
  now: Date,
  deleting: boolean,
): AutoscaleDecision {
  const { spec } = pool;
  const replicas = spec.replicas ?? SPEC_DEFAULTS.replicas;
  const autoscaling = spec.autoscaling;
  if (deleting) {
    return {
      desired: 0,
      status: autoscaling ? 'True' : 'False',
      reason: autoscaling ? SCALING_REASONS.ScalingDown : SCALING_REASONS.AutoscalingDisabled,
      message: 'the pool is being deleted: every cell is retired',
      retire: [],
    };
  }
  if (autoscaling === undefined) {
    return {
      desired: replicas,
      status: 'False',
      reason: SCALING_REASONS.AutoscalingDisabled,
      message: `spec.autoscaling is not set; the pool runs spec.replicas (${replicas}) cells`,
      retire: [],
    };
  }
  const min = autoscaling.minReplicas ?? SPEC_DEFAULTS.minReplicas;
  const max = autoscaling.maxReplicas;
  const recorded = previous.desiredReplicas;
  const start =
    typeof recorded === 'number' && Number.isInteger(recorded) && recorded >= 0
      ? recorded
      : replicas;
  return decideScale({
    minReplicas: min,
    maxReplicas: Math.max(min, max),
    scaleDownDelaySeconds: autoscaling.scaleDownDelaySeconds ?? SPEC_DEFAULTS.scaleDownDelaySeconds,
    previous: clamp(start, min, Math.max(min, max)),
    cells: active.map((cell) => {
      const idleSince =
        cell.phase === 'Ready' &&
        cell.holders !== undefined &&
        cell.holders.length === 0 &&
        cell.previousPhase === 'Ready' &&
        cell.previousSince !== undefined
          ? new Date(cell.previousSince)
          : cell.phase === 'Ready' && cell.holders !== undefined && cell.holders.length === 0
            ? now
            : undefined;
      return {
        name: cell.name,
        ordinal: cell.ordinal,
        ready: cell.phase === 'Ready',
        ...(idleSince !== undefined && !Number.isNaN(idleSince.getTime()) ? { idleSince } : {}),
      };
    }),
    ...(observation.consumerPods !== undefined
      ? {
          pending: pendingDemand(
            observation.consumerPods,
            config.gpuResource,
            pool.metadata.name,
            spec.machineProfile,
          ),
        }
      : {}),
    now,
  });
}

function readyVerdict(
  deleting: boolean,
  active: readonly Cell[],
  desired: number,
  blocker: Readiness,
): ConditionVerdict {
  if (deleting) {
    return verdict(
      'Ready',
      'False',
      READY_REASONS.Deleting,
      'the pool is being deleted; its cells are retired',
    );
  }
  const notReady = active.filter((cell) => cell.phase !== 'Ready');
  const missing = desired - active.length;
  const waiting = notReady.some((cell) => cell.machine === undefined) || missing > 0;
  if (waiting && blocker.state !== 'ok') {
    return verdict('Ready', 'False', blocker.reason, blocker.message);
  }
  if (notReady.length > 0 || missing > 0) {
    const parts = notReady.map((cell) => `${cell.name} is ${cell.phase}`);
    if (missing > 0) parts.push(`${missing} more to create`);
    return verdict(
      'Ready',
      'False',
      READY_REASONS.CellsNotReady,
      `${active.length - notReady.length} of ${desired} cells Ready: ${parts.join(', ')}`,
    );
  }
  return verdict(
    'Ready',
    'True',
    READY_REASONS.AllCellsReady,
    `${desired} of ${desired} cells Ready`,
  );
}

/**
 * Every observed child returned as it is, the status kept: without the children groups (`Ready`
 * is `NotObserved`), for a label problem (`Ready` says it), or, with `'asIs'`, the status exactly
 * as it was (a controller that is not the pool's writes nothing of its own). A Node of a cell that
 * was retiring keeps its cordon and taint: both GPUCellPool controllers apply as the same field
 * manager, and a Node returned by name only would lose them.
 */
function holdEverything(
  pool: GPUCellPool,
  previous: GPUCellPoolStatus,
  observation: PoolObservation,
  now: Date,
  problem?: ProvisionerLabelProblem | 'asIs',
): PoolSync {
  const generation = pool.metadata.generation;
  let status: GPUCellPoolStatus;
  if (problem === 'asIs') {
    status = {
      ...previous,
      ...(generation === undefined ? {} : { observedGeneration: generation }),
    };
  } else {
    let ready: ConditionVerdict;
    if (problem !== undefined) {
      ready = verdict('Ready', 'False', problem.reason, problem.message);
    } else {
      const missing = [
        observation.machines === undefined
          ? pool.spec.provisioner.type === 'ClusterAPI'
            ? 'Machines'
            : 'VirtualMachines'
          : undefined,
        observation.secrets === undefined ? 'Secrets' : undefined,
        observation.nodes === undefined ? 'Nodes' : undefined,
      ].filter((item): item is string => item !== undefined);
      ready = verdict(
        'Ready',
        'False',
        READY_REASONS.NotObserved,
        `not observed: ${missing.join(', ')}; every child is kept as it is`,
      );
    }
    const kept = (previous.conditions ?? []).filter((condition) => condition.type !== 'Ready');
    const verdicts: ConditionVerdict[] = [
      ready,
      ...kept.map((condition) =>
        verdict(condition.type, condition.status, condition.reason, condition.message),
      ),
    ];
    status = {
      ...previous,
      ...(generation === undefined ? {} : { observedGeneration: generation }),
      conditions: reconcileConditions(previous.conditions, verdicts, now, generation),
    };
  }
  const retiring = new Set(
    (previous.cells ?? [])
      .filter((cell) => cell.phase === 'Retiring' || cell.phase === 'Deleting')
      .map((cell) => cell.node)
      .filter((node): node is string => node !== undefined),
  );
  const children = observation.allChildren.map((child) =>
    child.kind === 'Node'
      ? retiring.has(child.metadata.name)
        ? retiringNode(child as NodeObject)
        : keptNode(child as NodeObject)
      : keptChild(child),
  );
  return {
    response: { status, children },
    remaining: (previous.cells?.length ?? 0) + children.length,
  };
}
