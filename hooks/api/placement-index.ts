/**
 * The placement index: one ConfigMap in the controller namespace holding, for every Cell, what a
 * placement reads of it and nothing more (decision D50). A VirtualClusterPlan with a
 * `cellSelector` relates this one object instead of the Cells it matches: a Cell's status lists
 * every profile Node (27 to 35 KB for 50 Nodes), so a plan relating 50 Cells received 1.9 MB per
 * sync, while an entry here is under 1 KB.
 *
 * An entry keeps what the feasibility evaluation and the choice read (hooks/feasibility/,
 * hooks/placement/): the Cell's name and labels (the plan applies its selector to them), its whole
 * spec, and of its status the phase, the InventoryFresh condition, the lease verdict, the
 * inventory figures the capacity check reads (as a list in `INVENTORY_FIELDS` order), the storage
 * summary without its per-Node list, the NodePort figures, `resolvedBy` and `observedAt`. Read
 * back, an entry is a Cell again, so a Cell is judged from the index exactly as from itself.
 *
 * Its bytes come back from the apiserver, where anyone who may edit ConfigMaps in the controller
 * namespace could have changed them: `readPlacementIndex` accepts an entry only when it rebuilds
 * into a Cell its own schema accepts, and names the entry and the problem otherwise.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Cell, CellStatus, ResourceInventory } from '../generated/types/index.js';
import { isJsonObject } from '../json/json.js';
import { compareStrings } from '../json/compare.js';
import { isLabelKey, isLabelValue } from '../kube/labels.js';
import { isDnsSubdomain } from '../kube/objects.js';
import { memoiseByText, stringBytes } from '../memo/bounded-memo.js';
import type { ConfigMapObject } from './cell-liveness-record.js';
import { INVENTORY_FIELDS } from './inventory-fields.js';
import { API_VERSION, KINDS } from './kinds.js';
import { validateObject } from './validate-object.js';

/** The index's name, in the controller namespace. */
export const PLACEMENT_INDEX_NAME = 'kubecell-placement-index';

/** The ConfigMap the kubecell-placement-index controller decorates: the index is its attachment. */
export const PLACEMENT_INDEX_SOURCE_NAME = 'kubecell-placement';

/** The label that makes a ConfigMap the index's source (metacontroller/placement-index.yaml). */
export const PLACEMENT_INDEX_SOURCE_LABEL = 'kubecell.io/placement-index-source';

/** The key of the index's binaryData holding its entries: JSON, gzip-compressed. */
export const PLACEMENT_INDEX_KEY = 'cells.json.gz';

/**
 * The most bytes an index may expand to (about 6,000 Cells): a larger one is refused unread, so a
 * small edited value cannot make the hook inflate gigabytes.
 */
const MAX_INDEX_BYTES = 8 * 1024 * 1024;

type InventoryFigures = (NonNullable<ResourceInventory['allocatable']> | null)[];

/** One Cell as the index holds it. */
export interface PlacementIndexEntry {
  name: string;
  labels?: Record<string, string>;
  spec: Cell['spec'];
  status?: EntryStatus;
}

type EntryStatus = Omit<CellStatus, 'inventory'> & {
  inventory?: Record<string, InventoryFigures>;
};

/** The Cell as a placement reads it. */
export function placementIndexEntry(cell: Cell): PlacementIndexEntry {
  const { name, labels } = cell.metadata;
  return {
    name,
    ...(labels === undefined || Object.keys(labels).length === 0 ? {} : { labels }),
    spec: cell.spec,
    ...(cell.status === undefined ? {} : { status: entryStatus(cell.status) }),
  };
}

function entryStatus(status: CellStatus): EntryStatus {
  const inventoryFresh = status.conditions
    ?.filter((condition) => condition.type === 'InventoryFresh')
    .map(({ type, status: value, reason, message, lastTransitionTime }) => ({
      type,
      status: value,
      reason,
      message,
      lastTransitionTime,
    }));
  const leaseFresh = status.managedCluster?.leaseFresh;
  const storage = status.storageInventory;
  const nodePorts = status.nodePorts;
  return {
    ...(status.phase === undefined ? {} : { phase: status.phase }),
    ...(inventoryFresh === undefined ? {} : { conditions: inventoryFresh }),
    ...(leaseFresh === undefined ? {} : { managedCluster: { leaseFresh } }),
    ...(status.inventory === undefined ? {} : { inventory: compactInventory(status.inventory) }),
    ...(storage === undefined
      ? {}
      : {
          storageInventory: {
            ...(storage.fresh === undefined ? {} : { fresh: storage.fresh }),
            ...(storage.freeCapacityKnown === undefined
              ? {}
              : { freeCapacityKnown: storage.freeCapacityKnown }),
            ...(storage.freeCapacity === undefined ? {} : { freeCapacity: storage.freeCapacity }),
          },
        }),
    ...(nodePorts === undefined
      ? {}
      : {
          nodePorts: {
            ...(nodePorts.allocated === undefined ? {} : { allocated: nodePorts.allocated }),
            ...(nodePorts.fresh === undefined ? {} : { fresh: nodePorts.fresh }),
          },
        }),
    ...(status.resolvedBy === undefined ? {} : { resolvedBy: status.resolvedBy }),
    ...(status.observedAt === undefined ? {} : { observedAt: status.observedAt }),
  } as EntryStatus;
}

function compactInventory(
  inventory: NonNullable<CellStatus['inventory']>,
): Record<string, InventoryFigures> {
  return Object.fromEntries(
    Object.entries(inventory).map(([resource, figures]) => [
      resource,
      INVENTORY_FIELDS.map((field) => figures?.[field] ?? null),
    ]),
  );
}

/**
 * The index's binaryData for these Cells: every entry, ordered by name, as JSON compressed with
 * gzip (its header carries no time), so the same Cells give the same bytes. Compressed because
 * entries repeat their keys and most figures: 50 entries of about 1 KB each shrink about tenfold,
 * which keeps a plan's request small however many Cells there are (docs/troubleshooting.md shows
 * how to read it).
 */
export function placementIndexBinaryData(cells: readonly Cell[]): Record<string, string> {
  const entries = [...cells]
    .sort((a, b) => compareStrings(a.metadata.name, b.metadata.name))
    .map(placementIndexEntry);
  const json = JSON.stringify({ cells: entries });
  return { [PLACEMENT_INDEX_KEY]: gzipSync(json, { level: 9 }).toString('base64') };
}

/** The entries of an index's encoded value as JSON text, or why they cannot be read. */
function placementIndexText(encoded: string): string | { invalid: string } {
  try {
    return gunzipSync(Buffer.from(encoded, 'base64'), {
      maxOutputLength: MAX_INDEX_BYTES,
    }).toString('utf8');
  } catch (err) {
    const tooLarge = err instanceof RangeError;
    return {
      invalid: tooLarge
        ? `binaryData.${PLACEMENT_INDEX_KEY} expands to more than ${MAX_INDEX_BYTES} bytes`
        : `binaryData.${PLACEMENT_INDEX_KEY} is not gzip-compressed data`,
    };
  }
}

/**
 * An entry that could not be read: by its name when it has one, else by its position, with its
 * labels when they at least are a map of strings (so a selector can still tell whether it would
 * have matched).
 */
export interface UnreadableEntry {
  entry: string;
  problem: string;
  labels?: Record<string, string>;
}

export interface PlacementIndexContents {
  cells: Cell[];
  unreadable: UnreadableEntry[];
}

/**
 * The Cells the index holds, rebuilt in `cellNamespace`, and the entries refused with why; or why
 * the index as a whole cannot be read.
 */
export function readPlacementIndex(
  configMap: ConfigMapObject,
  cellNamespace: string,
): PlacementIndexContents | { invalid: string } {
  const encoded = configMap.binaryData?.[PLACEMENT_INDEX_KEY];
  if (encoded === undefined) return { invalid: `binaryData.${PLACEMENT_INDEX_KEY} is missing` };
  // A copy: the remembered contents are shared by every later call.
  return structuredClone(readIndexes(`${cellNamespace}\n${encoded}`));
}

/**
 * Reading an index is mostly checking its entries against the Cell schema (about 18 ms for 50
 * Cells), and every selector plan still evaluating reads the same index until a Cell changes: the
 * contents are remembered by the SHA-256 of the namespace and the encoded index, bounded by bytes.
 */
const readIndexes = memoiseByText<PlacementIndexContents | { invalid: string }>(
  {
    maxBytes: 4 * 1024 * 1024,
    maxTextLength: 1024 * 1024,
    key: 'sha256',
    sizeOf: (contents) => stringBytes(JSON.stringify(contents)),
  },
  (text) => {
    const newline = text.indexOf('\n');
    return readEncodedIndex(text.slice(newline + 1), text.slice(0, newline));
  },
);

function readEncodedIndex(
  encoded: string,
  cellNamespace: string,
): PlacementIndexContents | { invalid: string } {
  const text = placementIndexText(encoded);
  if (typeof text !== 'string') return text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { invalid: `binaryData.${PLACEMENT_INDEX_KEY} does not hold JSON` };
  }
  if (!isJsonObject(parsed) || !Array.isArray(parsed['cells'])) {
    return { invalid: `binaryData.${PLACEMENT_INDEX_KEY} is not an object with a list "cells"` };
  }
  const contents: PlacementIndexContents = { cells: [], unreadable: [] };
  const seen = new Set<string>();
  for (const [position, entry] of (parsed['cells'] as unknown[]).entries()) {
    const label = entryLabel(entry, position);
    const labels = entryLabels(entry);
    const unreadable = (problem: string): UnreadableEntry => ({
      entry: label,
      problem,
      ...(labels === undefined ? {} : { labels }),
    });
    const read = readEntry(entry, cellNamespace);
    if ('invalid' in read) {
      contents.unreadable.push(unreadable(read.invalid));
    } else if (seen.has(read.metadata.name)) {
      contents.unreadable.push(unreadable('a second entry for the same Cell'));
    } else {
      seen.add(read.metadata.name);
      contents.cells.push(read);
    }
  }
  return contents;
}

function entryLabel(entry: unknown, position: number): string {
  const name = isJsonObject(entry) ? entry['name'] : undefined;
  return typeof name === 'string' && isDnsSubdomain(name) ? name : `cells[${position}]`;
}

/**
 * A key or field path from the index as a message may quote it: only when it is made of the
 * characters Kubernetes names and paths use, else a placeholder, so that bytes someone wrote into
 * the ConfigMap never reach a plan's status.
 */
function quotable(text: string): string {
  return /^[A-Za-z0-9][A-Za-z0-9_./[\]-]{0,252}$/.test(text)
    ? text
    : '<a key with other characters>';
}

/** The entry's labels when they are labels Kubernetes accepts (keys and values), else undefined. */
function entryLabels(entry: unknown): Record<string, string> | undefined {
  const labels = isJsonObject(entry) ? (entry['labels'] ?? {}) : undefined;
  if (!isJsonObject(labels)) return undefined;
  return Object.entries(labels).every(([key, value]) => isLabelKey(key) && isLabelValue(value))
    ? (labels as Record<string, string>)
    : undefined;
}

function readEntry(entry: unknown, cellNamespace: string): Cell | { invalid: string } {
  if (!isJsonObject(entry)) return { invalid: 'not an object' };
  const { name, labels, spec, status, ...rest } = entry;
  const unknownKeys = Object.keys(rest);
  const unknownKey = unknownKeys.sort()[0];
  if (unknownKey !== undefined) return { invalid: `unknown field ${quotable(unknownKey)}` };
  // The name and labels reach a plan's status (the Cells named, a Spread domain): they must be
  // what Kubernetes accepts on a Cell, which the schema check below does not cover.
  if (typeof name !== 'string' || !isDnsSubdomain(name)) {
    return { invalid: 'name is not a Cell name (a DNS subdomain)' };
  }
  if (entryLabels(entry) === undefined) {
    return { invalid: 'labels are not Kubernetes labels (qualified keys, label values)' };
  }
  if (status !== undefined && !isJsonObject(status)) return { invalid: 'status is not an object' };
  const inventory = status?.['inventory'];
  const expanded = inventory === undefined ? undefined : expandInventory(inventory);
  if (typeof expanded === 'string') return { invalid: expanded };
  const cell = {
    apiVersion: API_VERSION,
    kind: 'Cell',
    metadata: {
      name,
      namespace: cellNamespace,
      ...(labels === undefined ? {} : { labels }),
    },
    spec,
    ...(status === undefined
      ? {}
      : { status: { ...status, ...(expanded === undefined ? {} : { inventory: expanded }) } }),
  };
  const problems = validateObject(KINDS.Cell, cell);
  // The field and what is wrong with it, never the value (FieldError.message quotes it).
  if (problems.length > 0) {
    return {
      invalid: problems
        .slice(0, 3)
        .map((p) => `${quotable(p.field)}: ${p.type}`)
        .join('; '),
    };
  }
  return cell as unknown as Cell;
}

function expandInventory(inventory: unknown): Record<string, ResourceInventory> | string {
  if (!isJsonObject(inventory)) return 'status.inventory is not a map';
  const expanded: Record<string, ResourceInventory> = {};
  for (const [resource, figures] of Object.entries(inventory)) {
    const where = `status.inventory[${quotable(resource)}]`;
    if (!Array.isArray(figures) || figures.length !== INVENTORY_FIELDS.length) {
      return `${where} is not a list of ${INVENTORY_FIELDS.length} figures (${INVENTORY_FIELDS.join(', ')})`;
    }
    const figure: Record<string, string | number> = {};
    for (const [index, field] of INVENTORY_FIELDS.entries()) {
      const value: unknown = figures[index];
      if (value === null) continue;
      if (typeof value !== 'string' && typeof value !== 'number') {
        return `${where}[${index}] (${field}) is not a quantity`;
      }
      figure[field] = value;
    }
    expanded[resource] = figure as ResourceInventory;
  }
  return expanded;
}
