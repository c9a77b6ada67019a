/**
 * The Cell's liveness record: a small ConfigMap the kubecell-cell controller owns beside each Cell
 * (a child of the Cell, so Metacontroller writes it only when it changes and the garbage collector
 * removes it with the Cell), holding what a resolved VirtualCluster needs of its Cell in steady
 * state: which Cell it is, whether its lease is fresh, whether its inventory is observed, whether
 * its ManagedCluster was replaced, and which of its Nodes their GPUCellPool marked unhealthy.
 *
 * Why not the Cell itself: the Cell's status carries every profile Node and moves with pods and
 * lease renewals; every VirtualCluster that related it would be re-synced by each write and would
 * receive the whole Cell in every request (decision D36). The record changes only when one of its
 * verdicts does.
 *
 * Its bytes are read back from the apiserver, where anyone who may edit ConfigMaps in the
 * controller namespace could have changed them: `readCellLivenessRecord` accepts only the values
 * written here and names the key that is not.
 */
import { createHash } from 'node:crypto';
import type { Cell, CellStatus } from '../generated/types/index.js';
import {
  boundUnhealthyNodes,
  formatUnhealthyNodes,
  parseUnhealthyNodes,
  unhealthyNodesOf,
  type UnhealthyNodes,
} from './node-health.js';

/** Prefix of the record's name; the rest is the Cell's name (hashed when too long). */
export const CELL_LIVENESS_RECORD_PREFIX = 'kubecell-cell-';
const NAME_LIMIT = 253;

export type Tristate = 'True' | 'False' | 'Unknown';

export interface CellLivenessRecord {
  /** The UID of the Cell that wrote the record: a VirtualCluster compares its snapshot's. */
  cellUID: string;
  /** The Cell's phase, for a reader of the record (kubectl); no decision rests on it. */
  phase: string;
  /** status.managedCluster.leaseFresh: the LeaseFresh verdict. */
  leaseFresh: Tristate;
  /** The Cell's InventoryFresh condition. */
  inventoryFresh: Tristate;
  /** The Cell is Failed because its ManagedCluster was replaced. */
  managedClusterReplaced: boolean;
  /**
   * The profile Nodes marked unhealthy by their GPUCellPool (status.nodes[].health), sorted and
   * bounded; undefined in a record written before the key was (an older controller), or when the
   * Cell lists no Nodes (status.nodes absent: a cell agent older than the hub).
   */
  unhealthyNodes?: UnhealthyNodes;
}

export interface ConfigMapObject {
  apiVersion: 'v1';
  kind: 'ConfigMap';
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    [key: string]: unknown;
  };
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
}

/** The record's name for a Cell: prefix + name, or a hashed name when that is too long. */
export function cellLivenessRecordName(cellName: string): string {
  const plain = `${CELL_LIVENESS_RECORD_PREFIX}${cellName}`;
  if (plain.length <= NAME_LIMIT) return plain;
  const hash = createHash('sha256').update(cellName).digest('hex').slice(0, 16);
  return `${plain.slice(0, NAME_LIMIT - 17)}-${hash}`;
}

/** The record of a Cell's published status. */
export function cellLivenessRecord(cell: Cell, status: CellStatus): ConfigMapObject {
  const fresh = status.managedCluster?.leaseFresh;
  const inventory = status.conditions?.find((condition) => condition.type === 'InventoryFresh');
  const ready = status.conditions?.find((condition) => condition.type === 'Ready');
  const record: CellLivenessRecord = {
    cellUID: cell.metadata.uid ?? '',
    phase: status.phase ?? '',
    leaseFresh: fresh === undefined ? 'Unknown' : fresh ? 'True' : 'False',
    inventoryFresh: tristate(inventory?.status),
    managedClusterReplaced: status.phase === 'Failed' && ready?.reason === 'ManagedClusterReplaced',
    ...(status.nodes === undefined
      ? {}
      : { unhealthyNodes: boundUnhealthyNodes(unhealthyNodesOf(status.nodes)) }),
  };
  return cellConfigMap(
    cell,
    cellLivenessRecordName(cell.metadata.name),
    'kubecell.io/cell-liveness',
    {
      cellUID: record.cellUID,
      phase: record.phase,
      leaseFresh: record.leaseFresh,
      inventoryFresh: record.inventoryFresh,
      managedClusterReplaced: String(record.managedClusterReplaced),
      ...(record.unhealthyNodes === undefined
        ? {}
        : { unhealthyNodes: formatUnhealthyNodes(record.unhealthyNodes) }),
    },
  );
}

/** A ConfigMap the Cell owns beside it (its children), labelled with what it is. */
export function cellConfigMap(
  cell: Cell,
  name: string,
  roleLabel: string,
  data: Record<string, string>,
): ConfigMapObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace: cell.metadata.namespace ?? '',
      labels: { 'app.kubernetes.io/part-of': 'kubecell', [roleLabel]: 'true' },
    },
    data,
  };
}

function tristate(value: unknown): Tristate {
  return value === 'True' || value === 'False' ? value : 'Unknown';
}

const PHASES = ['', 'Pending', 'Provisioning', 'Ready', 'Degraded', 'Deleting', 'Failed'];
const TRISTATES = ['True', 'False', 'Unknown'];
const UID = /^[0-9A-Za-z-]{1,128}$/;

/**
 * The record a ConfigMap carries, or the first key whose value is not one the Cell controller
 * writes (`{ invalid: key }`). unhealthyNodes may be absent (a record of an older controller, or of
 * a Cell without status.nodes); present, it must be a list `formatUnhealthyNodes` writes: Node
 * names that are DNS-1123 subdomains, sorted, with the pool's verdict tokens.
 */
export function readCellLivenessRecord(
  configMap: ConfigMapObject,
): CellLivenessRecord | { invalid: string } {
  const data: Record<string, unknown> = configMap.data ?? {};
  const checks: [key: string, ok: (value: unknown) => boolean][] = [
    ['cellUID', (value) => typeof value === 'string' && UID.test(value)],
    ['phase', (value) => typeof value === 'string' && PHASES.includes(value)],
    ['leaseFresh', (value) => typeof value === 'string' && TRISTATES.includes(value)],
    ['inventoryFresh', (value) => typeof value === 'string' && TRISTATES.includes(value)],
    ['managedClusterReplaced', (value) => value === 'true' || value === 'false'],
  ];
  for (const [key, ok] of checks) if (!ok(data[key])) return { invalid: `data.${key}` };
  const listed = data['unhealthyNodes'];
  const unhealthyNodes =
    typeof listed === 'string'
      ? parseUnhealthyNodes(listed)
      : listed === undefined
        ? null
        : undefined;
  if (unhealthyNodes === undefined) return { invalid: 'data.unhealthyNodes' };
  return {
    cellUID: data['cellUID'] as string,
    phase: data['phase'] as string,
    leaseFresh: data['leaseFresh'] as Tristate,
    inventoryFresh: data['inventoryFresh'] as Tristate,
    managedClusterReplaced: data['managedClusterReplaced'] === 'true',
    ...(unhealthyNodes === null ? {} : { unhealthyNodes }),
  };
}
