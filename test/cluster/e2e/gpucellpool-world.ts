// The world a GPUCellPool end-to-end scenario runs in, for either provisioner: an audited KubeCell
// stack with that provisioner's component only, the simulator playing that provisioner and the
// cells' kubelets, a namespace for the cells and one for the tenants, and one pool.
//
// What differs between KubeVirt and Cluster API is a `PoolProvisioner` (how to create the pool,
// what the simulator plays, how to read a machine, and what the shared scenarios assert of that
// provisioner only); gpucellpool-kubevirt.test.ts and gpucellpool-cluster-api.test.ts each give
// one, and gpucellpool-scenarios.ts runs the same scenarios with it.
import {
  isPoolMachine,
  startSimulation,
  type KubeObject,
  type Simulation,
  type SimulationOptions,
} from '../../../harness/simulate/index.js';
import type {
  GpuCellPoolProvisioner,
  KubeCellStack,
} from '../../../harness/cluster/kubecell-stack.js';
import { CLUSTER_SETUP_TIMEOUT_MS } from '../shared-cluster.js';
import {
  cellsOf,
  startAuditedStack,
  type AuditedStack,
  type CellStatus,
  type Json,
  type NodeObject,
} from './gpucellpool-support.js';
import {
  apply,
  getObject,
  kubectl,
  listObjects,
  uniqueName,
  type Condition,
  type ObjectWithStatus,
} from './support.js';

/** The machine profile every pool of these scenarios names. */
export const PROFILE = 'e2e-a100';

/** A scenario: registers its `it`s (and `describe`s) against the world. */
export type Scenario = (world: PoolWorld) => void;

/** What the scenarios need to know of a provisioner. */
export interface PoolProvisioner {
  type: GpuCellPoolProvisioner;
  /** As the suite's title names it: `KubeVirt`, `Cluster API`. */
  title: string;
  /** The PROVISIONER column of `kubectl get gpucellpool`. */
  column: string;
  /** Prefixes of the cells' namespace and of the pool's name. */
  prefixes: { namespace: string; pool: string };
  /** A machine: what the titles call it (`VM`, `Machine`) and its resource for kubectl. */
  machine: { word: string; resource: string };
  /** The simulator of this provisioner, playing only the machines `filter` lets through. */
  simulation(filter: (machine: KubeObject) => boolean): SimulationOptions;
  /** What the cells' namespace holds before the pool is created. */
  prepare?(world: PoolWorld): Promise<void>;
  /** The pool as a platform engineer writes it. */
  poolObject(world: PoolWorld, replicas: number): Json;

  /** The pool created before its prerequisites: what it lacks and the conditions saying so. */
  missing: {
    /** `without its <what> the pool creates no …` */
    what: string;
    /** The condition that names what is missing, and what its message says. */
    waiting: Condition;
    message(world: PoolWorld): string;
    /** Another condition, as it is meanwhile. */
    other: Condition;
  };
  /** The cells' Nodes joined. */
  joined: {
    /** `the cells join from their <from>` */
    from: string;
    bootstrapValidReason: string;
    /** Where the simulated kubelets took their Nodes' names and labels from. */
    labelSources(simulation: Simulation): string[];
    /** More checks of a Ready cell, its machine and Node. */
    expectCell?(world: PoolWorld, cell: CellStatus, node: NodeObject | undefined): Promise<void>;
  };
  /** A new cell's machine held while a Node registers early; reaped once the cell's own joins. */
  earlyNode: {
    title: string;
    /** While `machine` is held: registers the early Node `name` and plays what else happens. */
    whileHeld(world: PoolWorld, name: string, machine: string): Promise<void>;
  };
  /** A retiring cell's machine. */
  retired: {
    /** `the cell’s <what> deleted` */
    what: string;
    /** What goes with the machine: resource and name, in the cells' namespace. */
    objects(machine: string): [string, string][];
    /** More checks of a retiring cell's machine while it stays. */
    expectKept?(machine: ObjectWithStatus): void;
  };
  /** What the health scenarios (gpucellpool-health.ts) play of this provisioner. */
  health: {
    /** The machine runs (its startup clock starts) without the simulator booting it. */
    runsWithoutNode(world: PoolWorld, machine: string): Promise<void>;
    /** A joined cell's machine failing for good. */
    failed: {
      /** `<title>: MachineFailed, retired and replaced` */
      title: string;
      fail(world: PoolWorld, machine: string): Promise<void>;
    };
  };
  /** The scenarios of this provisioner only, by where they run. */
  only: {
    /** Supplies the missing prerequisites; checks the machines created (2 cells). */
    createsMachines: Scenario;
    /** With the 2 cells Ready; leaves 2 cells Ready. */
    withTwoCells?: Scenario;
    /** In `afterwards`, before the shared checks. */
    afterwards?: Scenario;
  };
}

export interface PoolWorld {
  readonly provisioner: PoolProvisioner;
  /** The cells' namespace, the tenants' namespace (a host namespace) and the pool's name. */
  readonly namespace: string;
  readonly tenants: string;
  readonly poolName: string;
  /** Machines the simulator does not bring up until the test lets it. */
  readonly held: Set<string>;
  /** Set up by `before`. */
  readonly audited: AuditedStack;
  readonly stack: KubeCellStack;
  readonly simulation: Simulation;
  /** `<pool>-<ordinal>` */
  cell(ordinal: number): string;
  /** A cell's machine, and so its Node: `<pool>-<ordinal>-<incarnation>`. */
  machine(ordinal: number, incarnation?: number): string;
  pool(): Promise<ObjectWithStatus>;
  cellNamed(name: string): Promise<CellStatus | undefined>;
  node(name: string): Promise<NodeObject | undefined>;
  readMachine(name: string): Promise<ObjectWithStatus | undefined>;
  machineNames(): Promise<string[]>;
  /** Creates or scales the pool. */
  applyPool(replicas: number): Promise<void>;
  /** Whether a test has failed: the stack's logs are kept. */
  failed: boolean;
}

const NO_SIMULATION: SimulationOptions = {
  ocm: false,
  providerBaseline: false,
  profileNodes: false,
  k3k: false,
  kubevirt: false,
  clusterAPI: false,
};

/**
 * The world of one suite, set up in `before` and torn down in `after` (logs kept when a test
 * failed). Call inside `describe`.
 */
export function usePoolWorld(provisioner: PoolProvisioner): PoolWorld {
  let audited: AuditedStack | undefined;
  let simulation: Simulation | undefined;
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the world is not set up');
    return value;
  };
  const world: PoolWorld = {
    provisioner,
    namespace: uniqueName(provisioner.prefixes.namespace),
    tenants: uniqueName('e2e-gpu-tenant'),
    poolName: uniqueName(provisioner.prefixes.pool),
    held: new Set<string>(),
    get audited() {
      return started(audited);
    },
    get stack() {
      return started(audited).stack;
    },
    get simulation() {
      return started(simulation);
    },
    cell: (ordinal) => `${world.poolName}-${ordinal}`,
    machine: (ordinal, incarnation = 0) => `${world.cell(ordinal)}-${incarnation}`,
    async pool() {
      const object = await getObject(world.stack, 'gpucellpool', world.poolName);
      if (!object) throw new Error(`gpucellpool ${world.poolName} does not exist`);
      return object;
    },
    cellNamed: async (name) => cellsOf(await world.pool()).find((c) => c.name === name),
    node: (name) => getObject(world.stack, 'node', name) as Promise<NodeObject | undefined>,
    readMachine: (name) =>
      getObject(world.stack, provisioner.machine.resource, name, world.namespace),
    machineNames: async () =>
      (await listObjects(world.stack, provisioner.machine.resource, { namespace: world.namespace }))
        .map((machine) => machine.metadata.name)
        .sort(),
    applyPool: (replicas) => apply(world.stack, provisioner.poolObject(world, replicas)),
    failed: false,
  };

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    audited = await startAuditedStack(provisioner.type);
    simulation = await startSimulation(world.stack.cluster.kubeconfigPath, {
      ...NO_SIMULATION,
      // The pool's machines, but those the test holds back.
      ...provisioner.simulation(
        (machine) => isPoolMachine(machine) && !world.held.has(machine.metadata.name),
      ),
    });
    await kubectl(world.stack, ['create', 'namespace', world.namespace]);
    await kubectl(world.stack, ['create', 'namespace', world.tenants]);
    await kubectl(world.stack, [
      'label',
      'namespace',
      world.tenants,
      'kubecell.io/host-namespace=true',
    ]);
    await provisioner.prepare?.(world);
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') world.failed = true;
  });

  after(async function () {
    this.timeout(120_000);
    await simulation?.stop();
    await audited?.stop(world.failed);
  });

  return world;
}
