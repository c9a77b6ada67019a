/**
 * The assess phase: can the pool create new machines, and if not, why.
 *
 * - Bootstrap: the join Secret's user-data template (opaque bootstrap), or the Cluster API
 *   bootstrap config template. Its verdict is the BootstrapValid condition.
 * - Machine inputs: the GPU claim's device request (KubeVirt), or the Cluster API infrastructure
 *   template.
 *
 * A cell whose machine does not exist yet is created only when both are usable (the `blocker`
 * says why not); existing children are kept as observed otherwise. A kind the apiserver does not
 * serve (left out by the customize hook) is reported as `KindNotServed`, naming the kind and the
 * fix.
 */
import type { GPUCellPool, TypedObjectReference } from '../generated/types/index.js';
import { verdict, type ConditionVerdict } from '../status/conditions.js';
import { API_VERSIONS } from './constants.js';
import { clonedKind } from './names.js';
import type { SecretObject, TemplateObject } from './objects.js';
import { gpuRequestName, type Observed, type PoolObservation } from './observe.js';
import { BOOTSTRAP_REASONS, READY_REASONS } from './reasons.js';
import {
  describeProblem,
  joinContentHash,
  readJoinSecret,
  type JoinData,
  type JoinProblem,
} from './template.js';

/** Can new machines be created, and if not, why (a verdict for the Ready condition). */
export type Readiness =
  | { state: 'ok' }
  | { state: 'invalid'; reason: string; message: string }
  | { state: 'unknown'; reason: string; message: string };

export interface BootstrapAssessment {
  /** The BootstrapValid condition. */
  verdict: ConditionVerdict;
  /** Opaque bootstrap: the join data, when usable. */
  join?: JoinData;
  /** Opaque bootstrap: the join Secret's content hash, whenever the Secret exists. */
  contentHash?: string;
  readiness: Readiness;
}

export interface MachineInputs {
  readiness: Readiness;
  /** KubeVirt: the GPU claim's device request the VM is given. */
  requestName?: string;
}

export interface Assessment {
  bootstrap: BootstrapAssessment;
  machineInputs: MachineInputs;
  /** Why no new machine can be created (the bootstrap's reason first); `ok` when one can. */
  blocker: Readiness;
}

const OK: Readiness = { state: 'ok' };

export function assessPool(pool: GPUCellPool, observation: PoolObservation): Assessment {
  const bootstrap = assessBootstrap(pool, observation);
  const machineInputs = assessMachineInputs(pool, observation);
  const blocker =
    bootstrap.readiness.state !== 'ok' ? bootstrap.readiness : machineInputs.readiness;
  return { bootstrap, machineInputs, blocker };
}

function invalid(reason: string, message: string): Readiness {
  return { state: 'invalid', reason, message };
}

// --- bootstrap ---

export function assessBootstrap(
  pool: GPUCellPool,
  observation: PoolObservation,
): BootstrapAssessment {
  const { provisioner } = pool.spec;
  const ref =
    provisioner.type === 'ClusterAPI'
      ? provisioner.clusterAPI?.bootstrapConfigTemplateRef
      : undefined;
  return ref !== undefined
    ? clusterAPIBootstrap(pool.spec.namespace, ref, observation)
    : joinSecretBootstrap(pool, observation);
}

/** A BootstrapValid=False verdict, and Ready's reason for it. */
function invalidBootstrap(
  reason: string,
  readyReason: string,
  message: string,
): BootstrapAssessment {
  return {
    verdict: verdict('BootstrapValid', 'False', reason, message),
    readiness: invalid(readyReason, message),
  };
}

function clusterAPIBootstrap(
  namespace: string,
  ref: TypedObjectReference,
  observation: PoolObservation,
): BootstrapAssessment {
  const where = `${ref.kind} ${namespace}/${ref.name}`;
  const notServed = templateKindProblem({
    ref,
    namespace,
    field: 'bootstrapConfigTemplateRef',
    template: observation.bootstrapTemplate,
    clones: observation.bootstrapClones,
  });
  if (notServed !== undefined) {
    return invalidBootstrap(
      BOOTSTRAP_REASONS.KindNotServed,
      READY_REASONS.KindNotServed,
      notServed,
    );
  }
  if (observation.bootstrapTemplate.object === undefined) {
    return invalidBootstrap(
      BOOTSTRAP_REASONS.BootstrapTemplateNotFound,
      READY_REASONS.BootstrapInvalid,
      `${where} does not exist; no machine is created`,
    );
  }
  return {
    verdict: verdict(
      'BootstrapValid',
      'True',
      BOOTSTRAP_REASONS.ClusterAPIBootstrap,
      `the Cluster API bootstrap provider supplies the join data (cloned from ${where})`,
    ),
    readiness: OK,
  };
}

function joinSecretBootstrap(
  pool: GPUCellPool,
  observation: Pick<PoolObservation, 'joinSecret'>,
): BootstrapAssessment {
  const where = `${pool.spec.namespace}/${pool.spec.bootstrap?.joinSecretRef?.name ?? ''}`;
  if (!observation.joinSecret.observed) {
    const message = `the join Secret ${where} was not observed`;
    return {
      verdict: verdict('BootstrapValid', 'Unknown', BOOTSTRAP_REASONS.NotObserved, message),
      readiness: { state: 'unknown', reason: READY_REASONS.NotObserved, message },
    };
  }
  const secret: SecretObject | undefined = observation.joinSecret.object;
  if (secret === undefined) {
    return invalidBootstrap(
      BOOTSTRAP_REASONS.JoinSecretNotFound,
      READY_REASONS.BootstrapInvalid,
      `the join Secret ${where} does not exist; no machine is created`,
    );
  }
  const contentHash = joinContentHash(secret.data);
  const read = readJoinSecret(secret.data);
  if (!read.ok) {
    return {
      ...invalidBootstrap(
        problemReason(read.problem),
        READY_REASONS.BootstrapInvalid,
        describeProblem(read.problem, where),
      ),
      contentHash,
    };
  }
  const used = read.join.template.used;
  return {
    verdict: verdict(
      'BootstrapValid',
      'True',
      BOOTSTRAP_REASONS.TemplateValid,
      `the user-data template of Secret ${where} uses ${used.length === 0 ? 'no variables' : used.join(', ')}`,
    ),
    join: read.join,
    contentHash,
    readiness: OK,
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

// --- machine inputs ---

/** The GPU (KubeVirt) or the infrastructure template (Cluster API) new machines need. */
export function assessMachineInputs(
  pool: GPUCellPool,
  observation: PoolObservation,
): MachineInputs {
  return pool.spec.provisioner.type === 'ClusterAPI'
    ? infrastructureInputs(pool, observation)
    : gpuClaimInputs(pool, observation);
}

function infrastructureInputs(pool: GPUCellPool, observation: PoolObservation): MachineInputs {
  const namespace = pool.spec.namespace;
  const ref = pool.spec.provisioner.clusterAPI?.infrastructureTemplateRef;
  const notServed =
    ref === undefined
      ? undefined
      : templateKindProblem({
          ref,
          namespace,
          field: 'infrastructureTemplateRef',
          template: observation.infrastructureTemplate,
          clones: observation.infrastructureClones,
        });
  if (notServed !== undefined) {
    return { readiness: invalid(READY_REASONS.KindNotServed, notServed) };
  }
  if (observation.infrastructureTemplate.object === undefined) {
    const where = `${ref?.kind ?? ''} ${namespace}/${ref?.name ?? ''}`;
    return {
      readiness: invalid(
        READY_REASONS.MachineTemplateNotFound,
        `${where} does not exist; no machine is created`,
      ),
    };
  }
  return { readiness: OK };
}

function gpuClaimInputs(
  pool: GPUCellPool,
  observation: Pick<PoolObservation, 'claim'>,
): MachineInputs {
  const { gpu, namespace } = pool.spec;
  const kind = gpu.resourceClaimName !== undefined ? 'ResourceClaim' : 'ResourceClaimTemplate';
  const where = `${kind} ${namespace}/${gpu.resourceClaimName ?? gpu.resourceClaimTemplateName ?? ''}`;
  if (!observation.claim.observed) {
    return {
      readiness: invalid(
        READY_REASONS.KindNotServed,
        `kind ${kind} is not served by the apiserver in ${API_VERSIONS.resource}, so the GPU's ` +
          `${where} cannot be read: Dynamic Resource Allocation serves ${API_VERSIONS.resource} ` +
          `from Kubernetes 1.34 on; ${UNTIL_SERVED}`,
      ),
    };
  }
  const claim = observation.claim.object;
  const requestName = gpuRequestName(claim);
  if (claim === undefined || requestName === undefined) {
    return {
      readiness: invalid(
        READY_REASONS.GPUClaimNotFound,
        claim === undefined
          ? `${where} does not exist; no machine is created`
          : `${where} has no device request to give the VM; no machine is created`,
      ),
    };
  }
  return { readiness: OK, requestName };
}

// --- kinds that are not served ---

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

interface TemplateKinds {
  ref: TypedObjectReference;
  namespace: string;
  field: 'bootstrapConfigTemplateRef' | 'infrastructureTemplateRef';
  template: Observed<TemplateObject>;
  /** Names of the template's clones; undefined when their kind was not observed. */
  clones: Set<string> | undefined;
}

/** Why a Cluster API template, or its clone, cannot be used for want of its kind; or undefined. */
function templateKindProblem(input: TemplateKinds): string | undefined {
  if (!input.template.observed) return templateNotServed(input);
  if (input.clones === undefined) return cloneNotServed(input);
  return undefined;
}

function templateNotServed({ ref, namespace, field }: TemplateKinds): string {
  return (
    `kind ${ref.kind} is not served by the apiserver in ${ref.apiVersion}, so the template ` +
    `${namespace}/${ref.name} (spec.provisioner.clusterAPI.${field}) cannot be read: install the ` +
    `Cluster API provider that defines it (its CRD), or name a template of a served kind; ` +
    UNTIL_SERVED
  );
}

function cloneNotServed({ ref, namespace }: TemplateKinds): string {
  const kind = clonedKind(ref.kind);
  return (
    `kind ${kind} is not served by the apiserver in ${ref.apiVersion}, so the template ` +
    `${ref.kind} ${namespace}/${ref.name} cannot be cloned for a cell: install the CRD of ` +
    `${kind} (the provider of ${ref.kind} defines both); ${UNTIL_SERVED}`
  );
}
