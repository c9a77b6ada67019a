/**
 * The opaque bootstrap: the join Secret's `user-data` template, rendered once per cell.
 *
 * Syntax: `${NAME}` is a variable; NAME must be one of the closed set in
 * `TEMPLATE_VARIABLES` (anything else between `${` and `}` is an error that names it). `$${` is
 * an escaped, literal `${` (for shell scripts that use `${VAR}` themselves). A `$` not followed
 * by `{` is left as it is, and so is a `${` without a closing `}` on the same line.
 *
 * Values: JOIN_TOKEN is inserted as a double-quoted, escaped string (a YAML and shell string),
 * SSH_AUTHORIZED_KEYS as a YAML flow sequence of the non-empty lines of `sshAuthorizedKeys`,
 * everything else as is. One-line Secret values (token, apiServer, caCertHash, nodeSubnet) are
 * trimmed and must not contain a line break.
 *
 * Nothing here puts a Secret value into an error: problems name keys and variables only.
 */
import { createHash } from 'node:crypto';
import {
  JOIN_CONTENT_HASH_LENGTH,
  JOIN_SECRET_KEYS,
  LABEL_KEYS,
  TEMPLATE_VARIABLES,
  type TemplateVariable,
} from './constants.js';

type JoinSecretKey = (typeof JOIN_SECRET_KEYS)[keyof typeof JOIN_SECRET_KEYS];

/** Matches an escaped `$${...}` (group 1 is `$`) or a variable `${...}` (group 2 is the name). */
const REFERENCE = /\$(\$)?\{([^}\n]*)\}/g;

export interface ParsedTemplate {
  text: string;
  /** Variables of the closed set the template uses, sorted. */
  used: TemplateVariable[];
  /** Names outside the closed set, as written, sorted and unique. */
  unknown: string[];
}

function isVariable(name: string): name is TemplateVariable {
  return Object.prototype.hasOwnProperty.call(TEMPLATE_VARIABLES, name);
}

export function parseTemplate(text: string): ParsedTemplate {
  const used = new Set<TemplateVariable>();
  const unknown = new Set<string>();
  for (const match of text.matchAll(REFERENCE)) {
    if (match[1] !== undefined) continue;
    const name = match[2] ?? '';
    if (isVariable(name)) used.add(name);
    else unknown.add(name);
  }
  return { text, used: [...used].sort(), unknown: [...unknown].sort() };
}

/** Why a join Secret cannot be used; names keys and variables, never values. */
export type JoinProblem =
  | { kind: 'unknownVariable'; names: string[] }
  | { kind: 'missingKey'; keys: string[] }
  | { kind: 'invalidValue'; keys: string[] };

export interface JoinData {
  template: ParsedTemplate;
  /** The Secret's values the template needs, decoded and (one-line keys) trimmed. */
  values: Partial<Record<JoinSecretKey, string>>;
}

const ONE_LINE_KEYS: readonly JoinSecretKey[] = [
  JOIN_SECRET_KEYS.token,
  JOIN_SECRET_KEYS.apiServer,
  JOIN_SECRET_KEYS.caCertHash,
  JOIN_SECRET_KEYS.nodeSubnet,
];

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A Secret `data` value (base64) as text; undefined when it is not base64 of UTF-8. */
export function decodeSecretValue(value: unknown): string | undefined {
  if (typeof value !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) return undefined;
  try {
    return UTF8.decode(Buffer.from(value, 'base64'));
  } catch {
    return undefined;
  }
}

/**
 * Checks a join Secret's data (`data`, base64) against its template: every variable known, every
 * key the used variables need present, one-line values on one line. The first problem class
 * found wins, in this order: user-data missing, unknown variables, missing keys, invalid values.
 */
export function readJoinSecret(
  data: Record<string, unknown> | undefined,
): { ok: true; join: JoinData } | { ok: false; problem: JoinProblem } {
  const raw = data ?? {};
  const text = decodeSecretValue(raw[JOIN_SECRET_KEYS.userData]);
  if (raw[JOIN_SECRET_KEYS.userData] === undefined) {
    return { ok: false, problem: { kind: 'missingKey', keys: [JOIN_SECRET_KEYS.userData] } };
  }
  if (text === undefined) {
    return { ok: false, problem: { kind: 'invalidValue', keys: [JOIN_SECRET_KEYS.userData] } };
  }
  const template = parseTemplate(text);
  if (template.unknown.length > 0) {
    return { ok: false, problem: { kind: 'unknownVariable', names: template.unknown } };
  }
  const needed = new Set<JoinSecretKey>();
  for (const name of template.used) {
    const source = TEMPLATE_VARIABLES[name].source;
    if (source !== 'pool') needed.add(source);
  }
  const missing = [...needed].filter((key) => raw[key] === undefined).sort();
  if (missing.length > 0) return { ok: false, problem: { kind: 'missingKey', keys: missing } };
  const values: Partial<Record<JoinSecretKey, string>> = {};
  const invalid: string[] = [];
  for (const key of [...needed].sort()) {
    const decoded = decodeSecretValue(raw[key]);
    const value = decoded !== undefined && ONE_LINE_KEYS.includes(key) ? decoded.trim() : decoded;
    if (value === undefined || (ONE_LINE_KEYS.includes(key) && /[\r\n]/.test(value))) {
      invalid.push(key);
    } else {
      values[key] = value;
    }
  }
  if (invalid.length > 0) return { ok: false, problem: { kind: 'invalidValue', keys: invalid } };
  return { ok: true, join: { template, values } };
}

/**
 * The join Secret's content hash (status joinContentHash): the first 16 hex digits of SHA-256
 * over the compact JSON array of its `[key, base64 value]` pairs, sorted by key (the form
 * `kubectl get secret -o json | jq -cj '.data | to_entries | sort_by(.key) | map([.key, .value])'`
 * prints). Every key counts, used by the template or not; it tells contents apart and says
 * nothing of them.
 */
export function joinContentHash(data: Record<string, unknown> | undefined): string {
  const pairs = Object.keys(data ?? {})
    .sort()
    .map((key) => [key, String(data?.[key] ?? '')]);
  return createHash('sha256')
    .update(JSON.stringify(pairs), 'utf8')
    .digest('hex')
    .slice(0, JOIN_CONTENT_HASH_LENGTH);
}

/** The per-cell values of the pool variables. */
export interface CellVariables {
  cellName: string;
  nodeName: string;
  poolName: string;
  poolUid: string;
  machineProfile: string;
}

/**
 * The labels a cell's kubelet registers its Node with: the pool's generated selector label
 * (`controller-uid=<pool uid>`, so that Metacontroller adopts the Node), the machine profile and
 * the pool.
 */
export function poolNodeLabels(
  poolName: string,
  poolUid: string,
  machineProfile: string,
): Record<string, string> {
  return {
    [LABEL_KEYS.controllerUid]: poolUid,
    [LABEL_KEYS.machineProfile]: machineProfile,
    [LABEL_KEYS.pool]: poolName,
  };
}

/** The kubelet `--node-labels` value: the labels that let the pool adopt and place the Node. */
export function nodeLabels(cell: CellVariables): string {
  const labels = poolNodeLabels(cell.poolName, cell.poolUid, cell.machineProfile);
  return Object.keys(labels)
    .sort()
    .map((key) => `${key}=${labels[key] ?? ''}`)
    .join(',');
}

function sshKeys(text: string | undefined): string {
  const keys = (text ?? '')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  return JSON.stringify(keys);
}

/** Every variable's value for one cell. */
export function variableValues(
  join: JoinData,
  cell: CellVariables,
): Record<TemplateVariable, string> {
  const { values } = join;
  return {
    CELL_NAME: cell.cellName,
    NODE_NAME: cell.nodeName,
    POOL_NAME: cell.poolName,
    MACHINE_PROFILE: cell.machineProfile,
    NODE_LABELS: nodeLabels(cell),
    API_SERVER: values[JOIN_SECRET_KEYS.apiServer] ?? '',
    JOIN_TOKEN: JSON.stringify(values[JOIN_SECRET_KEYS.token] ?? ''),
    CA_CERT_HASH: values[JOIN_SECRET_KEYS.caCertHash] ?? '',
    NODE_SUBNET: values[JOIN_SECRET_KEYS.nodeSubnet] ?? '',
    SSH_AUTHORIZED_KEYS: sshKeys(values[JOIN_SECRET_KEYS.sshAuthorizedKeys]),
  };
}

/** The cell's user-data: the template with every variable replaced and `$${` unescaped. */
export function renderUserData(join: JoinData, cell: CellVariables): string {
  const values = variableValues(join, cell);
  return join.template.text.replace(
    REFERENCE,
    (whole, escaped: string | undefined, name: string) =>
      escaped !== undefined ? whole.slice(1) : isVariable(name) ? values[name] : whole,
  );
}

/** The condition message for a problem (keys and variable names only). */
export function describeProblem(problem: JoinProblem, secretName: string): string {
  const list = (items: string[]) => items.join(', ');
  switch (problem.kind) {
    case 'unknownVariable':
      return `the user-data template of Secret ${secretName} uses ${problem.names.length === 1 ? 'a variable' : 'variables'} outside the allowed set: ${list(problem.names.map((name) => `\${${name}}`))}; allowed are ${list(Object.keys(TEMPLATE_VARIABLES))} (write $\${ for a literal \${); no machine is created`;
    case 'missingKey':
      return `Secret ${secretName} lacks ${problem.keys.length === 1 ? 'key' : 'keys'} ${list(problem.keys)}${problem.keys.includes(JOIN_SECRET_KEYS.userData) ? '' : ' used by its user-data template'}; no machine is created`;
    case 'invalidValue':
      return `Secret ${secretName} ${problem.keys.length === 1 ? 'key' : 'keys'} ${list(problem.keys)} must be UTF-8${problem.keys.some((key) => key !== JOIN_SECRET_KEYS.userData) ? ' on one line' : ''}; no machine is created`;
  }
}
