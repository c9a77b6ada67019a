/**
 * The cell agent's report (decision D34): what the agent on a managed cluster observed for one
 * machine profile, in the parts of a Cell's status the Cell controller computes from Nodes, pods,
 * Services, PersistentVolumes and the provider baseline when they are on the hub. The agent writes
 * it into ConfigMap kubecell-cell-report-<profile> (contract.ts), OCM's work agent feeds it back
 * as a String, and the hub's Cell controller adds what only the hub knows (the VirtualClusters'
 * committed entitlements, the declared devices) to make the Cell's inventory.
 *
 * The serialised form is stable (keys sorted at every level, no whitespace): the same report is
 * the same bytes, so the agent can tell a changed report from an unchanged one by its text, and
 * an unchanged report never rewrites its ConfigMap nor the ManifestWork's status.
 */
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type {
  CellNode,
  CellNodeAddress,
  CellNodeCount,
  CellNodePortStatus,
  CellNotReadyNode,
  CellProviderStatus,
  CellStorageInventory,
} from '../generated/types/index.js';
// Imported, not read from disk beside this file: the bundled `kubecell` command carries it.
import cellSchema from '../generated/schemas/cell.json' with { type: 'json' };
import { isJsonObject, jsonTypeOf, keySegment, summarizeProblems } from '../json/json.js';

export const CELL_REPORT_VERSION = 1;

/**
 * One resource's amounts, as Kubernetes quantities; a field is absent when nothing it sums names
 * the resource (no Ready Node lists it, no pod requests it).
 */
export interface ReportedResource {
  /** Sum of the Ready profile Nodes' capacity. */
  capacity?: string;
  /** Sum of the Ready profile Nodes' allocatable. */
  allocatable?: string;
  /** Requests of the non-terminal pods bound to those Nodes (running or not yet). */
  requested?: string;
  /** Requests of host-namespace pods no Node runs yet (status.inventory[].pending). */
  pending?: string;
}

/**
 * The Ready, schedulable Nodes whose InternalIP the agent left out of nodeAddresses because it is
 * not an IP address: how many, and the first 16 names. Absent when there are none, so a report
 * without refusals is the same bytes as before the field existed.
 */
export interface RefusedNodeAddresses {
  count: number;
  nodes: string[];
}

export interface CellReport {
  version: typeof CELL_REPORT_VERSION;
  /** The machine profile (kubecell.io/machine-profile label value) the report is about. */
  machineProfile: string;
  /** When the agent observed what it reports (RFC 3339, UTC, seconds). */
  observedAt: string;
  nodeCount: CellNodeCount;
  notReadyNodes: CellNotReadyNode[];
  nodeAddresses: CellNodeAddress[];
  refusedNodeAddresses?: RefusedNodeAddresses;
  /**
   * Every profile Node, as a Local Cell's status.nodes lists them (without observedAt), bounded
   * the same way; storageInventory.perNode carries their storage. Absent from an agent older
   * than the hub's per-Node detail (the hub then lists none: NodeDetailNotReported).
   */
  nodes?: CellNode[];
  /** Per resource name, the sums over the Ready profile Nodes and the unscheduled demand. */
  resources: Record<string, ReportedResource>;
  storageInventory: CellStorageInventory;
  nodePorts: CellNodePortStatus;
  provider: CellProviderStatus;
}

/** The same schema the Cell's status parts have in the CRD, so a report fits the status. */
function statusParts(): Record<string, Record<string, unknown>> {
  // A copy: the module is shared with the admission webhook's kinds (hooks/api/kinds.ts).
  const cell = structuredClone(cellSchema) as {
    properties: { status: { properties: Record<string, Record<string, unknown>> } };
  };
  return cell.properties.status.properties;
}

function reportSchema(): Record<string, unknown> {
  const status = statusParts();
  const inventory = status['inventory'] as {
    maxProperties: number;
    additionalProperties: { properties: { capacity: Record<string, unknown> } };
  };
  // The status's Quantity (int or string, one pattern); a report writes strings only.
  const quantity: Record<string, unknown> = {
    ...inventory.additionalProperties.properties.capacity,
    type: 'string',
  };
  delete quantity['anyOf'];
  const parts = [
    'nodeCount',
    'notReadyNodes',
    'nodeAddresses',
    'storageInventory',
    'nodePorts',
    'provider',
  ] as const;
  const resourceFields = ['capacity', 'allocatable', 'requested', 'pending'];
  return {
    type: 'object',
    additionalProperties: false,
    required: ['version', 'machineProfile', 'observedAt', 'resources', ...parts],
    properties: {
      version: { const: CELL_REPORT_VERSION },
      machineProfile: { type: 'string', minLength: 1, maxLength: 63 },
      observedAt: { type: 'string', maxLength: 64, timestamp: true },
      resources: {
        type: 'object',
        maxProperties: inventory.maxProperties,
        additionalProperties: {
          type: 'object',
          additionalProperties: false,
          properties: Object.fromEntries(resourceFields.map((field) => [field, quantity])),
        },
      },
      ...Object.fromEntries(parts.map((part) => [part, status[part]])),
      storageInventory: reportedStorageSchema(status),
      nodes: reportedNodesSchema(status),
      refusedNodeAddresses: refusedSchema(status),
    },
  };
}

/** A Node's name as the apiserver allows it (a DNS-1123 subdomain): safe to name in a message. */
const NODE_NAME = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

/**
 * status.nodes as the CRD has it, with two checks more for bytes from a managed cluster: a name is
 * a Node name (it is named in the Cell's status and messages), and no observedAt (the hub stamps
 * its own).
 */
function reportedNodesSchema(
  status: Record<string, Record<string, unknown>>,
): Record<string, unknown> {
  const nodes = structuredClone(status['nodes']) as {
    items: { properties: Record<string, Record<string, unknown>> };
  };
  const properties = nodes.items.properties;
  properties['name'] = { ...properties['name'], pattern: NODE_NAME };
  delete properties['observedAt'];
  return nodes;
}

/** status.storageInventory, each perNode entry's node a Node name, no observedAt. */
function reportedStorageSchema(
  status: Record<string, Record<string, unknown>>,
): Record<string, unknown> {
  const storage = structuredClone(status['storageInventory']) as {
    properties: Record<string, { items?: { properties: Record<string, Record<string, unknown>> } }>;
  };
  const perNode = storage.properties['perNode']?.items?.properties;
  if (perNode) perNode['node'] = { ...perNode['node'], pattern: NODE_NAME };
  delete storage.properties['observedAt'];
  return storage;
}

function refusedSchema(status: Record<string, Record<string, unknown>>): Record<string, unknown> {
  const nodeAddresses = status['nodeAddresses'] as { maxItems: number };
  return {
    type: 'object',
    additionalProperties: false,
    required: ['count', 'nodes'],
    properties: {
      count: { type: 'integer', minimum: 1, maximum: 2147483647 },
      nodes: {
        type: 'array',
        minItems: 1,
        maxItems: nodeAddresses.maxItems,
        items: { type: 'string', minLength: 1, maxLength: 253, pattern: NODE_NAME },
      },
    },
  };
}

const ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
// The CRD's address formats, as the generated validators check them (ajv-formats); ajv without
// strict mode would ignore a format it does not know.
addFormatsModule.default(ajv, ['ipv4', 'ipv6', 'date-time']);
// The CRD's integer formats; the schema's minimum and the JSON number already bound them.
ajv.addFormat('int32', true);
ajv.addFormat('int64', true);
ajv.addKeyword({
  keyword: 'timestamp',
  errors: false,
  validate: (_schema: unknown, value: unknown) =>
    typeof value === 'string' &&
    /^\d{4}-\d\d-\d\dT/.test(value) &&
    !Number.isNaN(Date.parse(value)),
});
const validateReport = ajv.compile<CellReport>(reportSchema());

/** A report text that is not a CellReport; the message names every bad field (bounded). */
export class CellReportError extends Error {
  override name = 'CellReportError';
  constructor(readonly problems: string[]) {
    super(`not a cell agent report: ${summarizeProblems(problems)}`);
  }
}

/** Parses and checks a report's text; throws a CellReportError naming the bad fields. */
export function parseCellReport(text: string): CellReport {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CellReportError([`report: not JSON (${text.length} characters)`]);
  }
  if (!isJsonObject(value))
    throw new CellReportError([`report: must be an object, got ${jsonTypeOf(value)}`]);
  if (validateReport(value)) return value;
  throw new CellReportError(describeAll(validateReport.errors ?? []));
}

/**
 * One problem per message: an address that is not an IP fails each format of its anyOf and the
 * anyOf itself, which say the same thing; an anyOf adds nothing to what its branches said.
 */
function describeAll(errors: readonly ErrorObject[]): string[] {
  const detailed = new Set(
    errors.filter((error) => error.keyword !== 'anyOf').map((error) => error.instancePath),
  );
  const kept = errors.filter(
    (error) => error.keyword !== 'anyOf' || !detailed.has(error.instancePath),
  );
  return [...new Set(kept.map(describe))];
}

function describe(error: ErrorObject): string {
  const path = `report${fieldPath(error)}`;
  if (error.keyword === 'format' && ['ipv4', 'ipv6'].includes(String(error.params['format'])))
    return `${path}: must be an IPv4 or IPv6 address (no brackets, no zone)`;
  if (error.keyword === 'pattern' && error.params['pattern'] === NODE_NAME)
    return `${path}: must be a Node name (a DNS-1123 subdomain)`;
  if (error.keyword === 'required')
    return `${path}.${String(error.params['missingProperty'])}: is required`;
  if (error.keyword === 'additionalProperties')
    return `${path}${keySegment(String(error.params['additionalProperty']))}: is not a report field`;
  if (error.keyword === 'timestamp') return `${path}: must be an RFC 3339 time`;
  if (error.keyword === 'pattern') return `${path}: must be a quantity such as 4, 500m or 16Gi`;
  if (error.keyword === 'type')
    return `${path}: must be ${String(error.params['type'])}, got ${jsonTypeOf(error.data)}`;
  return `${path}: ${error.message ?? 'is invalid'}`;
}

/** `/resources/nvidia.com~1gpu/capacity` → `.resources["nvidia.com/gpu"].capacity`. */
function fieldPath(error: ErrorObject): string {
  return error.instancePath
    .split('/')
    .slice(1)
    .map((raw) => raw.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((step) =>
      /^\d+$/.test(step)
        ? `[${step}]`
        : /^[A-Za-z][A-Za-z0-9]*$/.test(step)
          ? `.${step}`
          : keySegment(step),
    )
    .join('');
}

/** The report's text: JSON with keys sorted at every level, no whitespace (stable bytes). */
export function serializeCellReport(report: CellReport): string {
  return JSON.stringify(sortedKeys(report));
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (!isJsonObject(value)) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    if (value[key] !== undefined) sorted[key] = sortedKeys(value[key]);
  }
  return sorted;
}

/** Whether two reports say the same, their observation time aside. */
export function sameReportContent(a: CellReport, b: CellReport): boolean {
  return (
    serializeCellReport({ ...a, observedAt: '' }) === serializeCellReport({ ...b, observedAt: '' })
  );
}
