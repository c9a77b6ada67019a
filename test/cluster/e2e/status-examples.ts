// The status examples of docs/concepts.md, captured by status-examples.test.ts from an end-to-end
// run through the real Metacontroller: the normalisation of what legitimately differs between
// runs, the rendering (as `kubectl get -o yaml` shows a status: keys sorted; then formatted as
// prettier formats the doc), and reading and rewriting the blocks between
// `<!-- status-example: <name> -->` and `<!-- /status-example -->`. Nothing here needs a cluster.
//
// What the normalisation changes, and nothing else:
// - names: the run's unique names become the samples' (cell1, a100, tenant-a, small), wherever
//   they appear (the simulated Nodes' names, messages);
// - UIDs: each object's UID becomes a fixed one (so does the kubeconfig Secret's name, which
//   carries the VirtualCluster's UID); any other UID is an error;
// - times: every RFC 3339 time becomes EXAMPLE_TIME, except a plan's expiresAt, which keeps its
//   distance from evaluatedAt (the TTL);
// - addresses: the simulated Nodes' InternalIPs (127.0.0.x) become EXAMPLE_ADDRESS, and the API
//   NodePort becomes EXAMPLE_NODE_PORT;
// - label hashes: a Cell's nodes[].labelHash is recomputed from the Node's labels with the run's
//   names renamed, as the Cell would hash the samples' Nodes (the labels carry the run's names);
// - NodePort counts: they cover every Service of the cluster, which the test shares with other
//   scenarios; they are shown as if the example's VirtualCluster held the only NodePort.
// Another cluster-wide figure is waited for rather than normalised: the test captures only once
// no unscheduled pod in any host namespace adds `pending` demand to the Cell.
//
// Examples are compared by value (the block's YAML parsed, rendered canonically), so how prettier
// or a hand formats the doc does not matter; an update writes them already formatted as prettier
// formats the doc.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as prettier from 'prettier';
import { parse, stringify } from 'yaml';
import { labelHash } from '../../../hooks/cell/node-detail.js';
import { repoRoot } from '../../../harness/cluster/paths.js';

/** Set to 1 to rewrite the examples in docs/concepts.md from the run (a snapshot update). */
export const UPDATE_VARIABLE = 'KUBECELL_UPDATE_STATUS_EXAMPLES';
export const UPDATE_COMMAND = `${UPDATE_VARIABLE}=1 npx mocha --no-config --node-option import=tsx --timeout 300000 test/cluster/e2e/status-examples.test.ts`;

export function updatingExamples(): boolean {
  return process.env[UPDATE_VARIABLE] === '1';
}

export const CONCEPTS_FILE = 'docs/concepts.md';
const CONCEPTS = path.join(repoRoot, CONCEPTS_FILE);

export const EXAMPLE_TIME = '2026-12-01T00:00:00Z';
export const EXAMPLE_ADDRESS = '10.0.12.7';
export const EXAMPLE_NODE_PORT = 30443;

const TIME = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})/g;
const UID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g;
const NODE_PORTS_FREE = /^(\d+) of (\d+) NodePorts/;

export interface Normalisation {
  /** A run's name → the sample's; applied to every string, longest first. */
  names: Record<string, string>;
  /** A run's UID → the example's. */
  uids: Record<string, string>;
  /** The simulated Nodes' InternalIPs. */
  addresses: string[];
  /** The API Service's NodePort. */
  nodePort?: number;
  /** Each simulated Node's labels, by the run's Node name (their values carry the run's names). */
  nodeLabels?: Record<string, Record<string, string>>;
  /** What a Cell's `nodePorts.allocated` is shown as. */
  nodePortsAllocated: number;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Replaces the run's names (longest first, so a name containing another goes first). */
export function renameIn(text: string, names: Record<string, string>): string {
  let result = text;
  for (const [from, to] of Object.entries(names).sort(([a], [b]) => b.length - a.length)) {
    result = result.split(from).join(to);
  }
  return result;
}

function normaliseString(text: string, n: Normalisation, times: Map<string, string>): string {
  let result = text.replace(TIME, (time) => times.get(time) ?? EXAMPLE_TIME);
  result = result.replace(UID, (uid) => {
    const known = n.uids[uid];
    if (known === undefined) throw new Error(`an unexpected UID in a status: ${text}`);
    return known;
  });
  result = renameIn(result, n.names);
  for (const address of n.addresses) {
    // Not part of a longer address; a full stop may end the sentence after it.
    result = result.replace(
      new RegExp(`(?<![\\d.])${escape(address)}(?!\\d|\\.\\d)`, 'g'),
      () => EXAMPLE_ADDRESS,
    );
  }
  if (n.nodePort !== undefined) {
    result = result.replace(new RegExp(`:${n.nodePort}(?!\\d)`, 'g'), `:${EXAMPLE_NODE_PORT}`);
  }
  return result;
}

function walk(value: Json, key: string, n: Normalisation, times: Map<string, string>): Json {
  if (typeof value === 'string') return normaliseString(value, n, times);
  if (typeof value === 'number') {
    return key === 'port' && value === n.nodePort ? EXAMPLE_NODE_PORT : value;
  }
  if (Array.isArray(value)) return value.map((item) => walk(item, '', n, times));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([field, item]) => [field, walk(item, field, n, times)]),
    );
  }
  return value;
}

/** For each of a Cell's nodes[], the hash of its Node's labels with the run's names renamed. */
function labelHashes(
  status: Record<string, unknown>,
  n: Normalisation,
): (string | undefined)[] | undefined {
  const nodes = status['nodes'];
  if (!Array.isArray(nodes) || n.nodeLabels === undefined) return undefined;
  return nodes.map((node: { name?: string }) => {
    const labels = n.nodeLabels?.[node.name ?? ''];
    if (labels === undefined) return undefined;
    return labelHash(
      Object.fromEntries(
        Object.entries(labels).map(([key, value]) => [
          renameIn(key, n.names),
          renameIn(value, n.names),
        ]),
      ),
    );
  });
}

/** A NodePorts check that passed, as if the cluster had no other NodePort. */
function normaliseNodePortsCheck(check: Json): Json {
  if (check === null || typeof check !== 'object' || Array.isArray(check)) return check;
  if (check['name'] !== 'NodePorts' || check['result'] !== 'Pass') return check;
  const size = NODE_PORTS_FREE.exec(String(check['message']))?.[2];
  if (size === undefined) return check;
  return {
    ...check,
    available: size,
    message: String(check['message']).replace(NODE_PORTS_FREE, `${size} of ${size} NodePorts`),
  };
}

/** A KubeCell object's status with what varies between runs made fixed (see the top). */
export function normaliseStatus(status: Record<string, unknown>, n: Normalisation): Json {
  const times = new Map<string, string>();
  const { evaluatedAt, expiresAt } = status;
  if (typeof evaluatedAt === 'string' && typeof expiresAt === 'string') {
    const ttl = Date.parse(expiresAt) - Date.parse(evaluatedAt);
    times.set(expiresAt, `${new Date(Date.parse(EXAMPLE_TIME) + ttl).toISOString().slice(0, 19)}Z`);
  }
  const hashes = labelHashes(status, n);
  const result = walk(status as Json, '', n, times) as { [key: string]: Json };
  const nodes = result['nodes'];
  if (Array.isArray(nodes) && hashes) {
    result['nodes'] = nodes.map((node, index) =>
      node !== null && typeof node === 'object' && !Array.isArray(node) && hashes[index]
        ? { ...node, labelHash: hashes[index] }
        : node,
    );
  }
  const nodePorts = result['nodePorts'];
  if (nodePorts !== null && typeof nodePorts === 'object' && !Array.isArray(nodePorts)) {
    result['nodePorts'] = { ...nodePorts, allocated: n.nodePortsAllocated };
  }
  for (const field of ['checks', 'feasibilityChecks']) {
    const checks = result[field];
    if (Array.isArray(checks)) result[field] = checks.map(normaliseNodePortsCheck);
  }
  return result;
}

/** `status:` and the value, keys sorted as kubectl sorts them, not folded. */
export function canonicalYaml(status: unknown): string {
  return stringify({ status }, { sortMapEntries: true, lineWidth: 0, singleQuote: true });
}

/** The block as written into the doc: canonical, then formatted as prettier formats the doc. */
export async function exampleBlock(status: unknown): Promise<string> {
  const options = (await prettier.resolveConfig(CONCEPTS)) ?? {};
  return prettier.format(canonicalYaml(status), { ...options, parser: 'yaml' });
}

const startMarker = (name: string): string => `<!-- status-example: ${name} -->`;
const END_MARKER = '<!-- /status-example -->';

/** Where the example `name` is in the doc: the marker's span and the YAML inside its fence. */
function locate(doc: string, name: string): { from: number; to: number; yaml: string } {
  const start = doc.indexOf(startMarker(name));
  if (start === -1) throw new Error(`${CONCEPTS_FILE} has no ${startMarker(name)}`);
  const from = start + startMarker(name).length;
  const to = doc.indexOf(END_MARKER, from);
  if (to === -1) throw new Error(`${CONCEPTS_FILE}: ${startMarker(name)} is not closed`);
  const fenced = /^\s*```yaml\n([\s\S]*?)^```\s*$/m.exec(doc.slice(from, to));
  return { from, to, yaml: fenced?.[1] ?? '' };
}

export function readConcepts(): string {
  return readFileSync(CONCEPTS, 'utf8');
}

export function writeConcepts(doc: string): void {
  writeFileSync(CONCEPTS, doc);
}

/** The example's value as the doc has it (undefined when the block is empty or not YAML). */
export function documentedStatus(doc: string, name: string): unknown {
  const { yaml } = locate(doc, name);
  try {
    return (parse(yaml) as { status?: unknown } | null)?.status;
  } catch {
    return undefined;
  }
}

/** The doc with the example `name` replaced by `block` (already formatted). */
export function withExample(doc: string, name: string, block: string): string {
  const { from, to } = locate(doc, name);
  return `${doc.slice(0, from)}\n\n\`\`\`yaml\n${block}\`\`\`\n\n${doc.slice(to)}`;
}

/** The lines that differ (`-` the doc, `+` the run), with two lines of context. */
export function lineDiff(documented: string, captured: string): string {
  const a = documented.split('\n');
  const b = captured.split('\n');
  // Longest common subsequence, table from the end.
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i]![j] =
        a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const lines: [' ' | '-' | '+', string][] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      lines.push([' ', a[i++]!]);
      j++;
    } else if (i < a.length && (j === b.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      lines.push(['-', a[i++]!]);
    } else {
      lines.push(['+', b[j++]!]);
    }
  }
  const near = (index: number) =>
    lines.slice(Math.max(0, index - 2), index + 3).some(([mark]) => mark !== ' ');
  return lines
    .map(([mark, line], index) => (near(index) ? `${mark} ${line}` : undefined))
    .filter((line, index, all) => line !== undefined || index === 0 || all[index - 1] !== undefined)
    .map((line) => line ?? '  …')
    .join('\n');
}
