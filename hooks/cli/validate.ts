/**
 * `kubecell validate -f <file|dir|->`: the admission webhook's rules, offline. Every YAML (or
 * JSON) document of every file is checked: KubeCell objects against the generated schema of
 * their kind and its CEL rules, exactly as the webhook checks a CREATE, plus the rules that the
 * input alone can answer (a Cell's namespace; a VirtualCluster or plan whose Namespace is in the
 * input must be a host namespace; one VirtualCluster per namespace within the input; a
 * GPUCellPool's provisioner label matches its type). Rules that need the cluster are not
 * checked, and the output says so. Other kinds are skipped.
 *
 * Each error is one line on stdout, `<file>: <Kind>/<name>: <field>: <message>`; a summary goes
 * to stderr. Exit code 0 when nothing is wrong, 1 on any error, 2 on a usage error.
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { fieldError, type FieldError } from '../api/field-errors.js';
import { GROUP, KIND_NAMES, kindInfo } from '../api/kinds.js';
import { LABELS } from '../kube/labels.js';
import type { VirtualClusterSummary } from '../admission/lookup.js';
import {
  DEFAULT_CONTROLLER_NAMESPACE,
  cellNamespaceError,
  hostNamespaceError,
  namespaceTakenError,
  provisionerLabelError,
} from '../admission/rules.js';
import { validateObject } from '../api/validate-object.js';
import { EXIT_INVALID, EXIT_OK, EXIT_USAGE, UsageError, splitFlag, type CliIo } from './io.js';

export { EXIT_INVALID, EXIT_OK, EXIT_USAGE, type CliIo } from './io.js';

/**
 * The whole `kubecell` command line (cli.ts), for callers that import it from here
 * (test/install/docs.test.ts). Loaded on call: cli.ts imports this module.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const cli = await import('./cli.js');
  return cli.runCli(argv, io);
}

const OFFLINE_NOTE =
  'offline check: the rules that need the cluster are not checked here (a Cell whose refs ' +
  'VirtualClusters have resolved; a namespace that already hosts a VirtualCluster in the cluster; ' +
  'the host-namespace label of a Namespace that is not in the input); the admission webhook ' +
  'enforces them';

export const VALIDATE_USAGE = `Usage:
  kubecell validate -f <file|directory|-> [-f ...] [--controller-namespace <namespace>]

Checks KubeCell manifests offline with the admission webhook's rules: the JSON Schema of each
kind (unknown fields are errors), the CEL rules of the CRDs, and the cross-object rules the
input can answer by itself:
  - a Cell must be in the controller namespace (--controller-namespace, or
    KUBECELL_CONTROLLER_NAMESPACE, default ${DEFAULT_CONTROLLER_NAMESPACE});
  - a VirtualCluster or VirtualClusterPlan whose Namespace is in the input must be in a
    namespace labelled ${LABELS.hostNamespace}=true;
  - the input puts at most one VirtualCluster in a namespace;
  - a GPUCellPool's label ${LABELS.provisioner}, when set, matches spec.provisioner.type
    (the admission webhook sets it when it is missing).
It is offline: rules that need the cluster (a Cell in use by VirtualClusters, a namespace
already hosting a VirtualCluster, Namespaces not in the input) are left to the webhook.

Directories are read recursively (*.yaml, *.yml, *.json); files may hold several documents;
"-" reads standard input. Documents of other kinds are skipped.

Each error is printed as <file>: <Kind>/<name>: <field>: <message>.
Exit status: 0 no errors, 1 errors found, 2 usage error (bad arguments, unreadable path).
`;

interface Options {
  files: string[];
  controllerNamespace: string;
}

/** The arguments after `validate`. */
function parseArgs(args: readonly string[], env: NodeJS.ProcessEnv): Options | 'help' {
  const options: Options = {
    files: [],
    controllerNamespace: env.KUBECELL_CONTROLLER_NAMESPACE?.trim() || DEFAULT_CONTROLLER_NAMESPACE,
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--help' || arg === '-h') return 'help';
    const { flag, inline } = splitFlag(arg, ['-f']);
    const value = (): string => {
      if (inline !== undefined) return inline;
      const next = args[++i];
      if (next === undefined || next === '') throw new UsageError(`${flag} needs a value`);
      return next;
    };
    if (flag === '-f' || flag === '--filename') options.files.push(value());
    else if (flag === '--controller-namespace') options.controllerNamespace = value();
    else throw new UsageError(`unknown argument ${JSON.stringify(arg)}`);
  }
  if (options.files.length === 0) throw new UsageError('validate needs -f <file|directory|->');
  return options;
}

const MANIFEST_EXTENSIONS = ['.yaml', '.yml', '.json'];

/** The files under `path`: itself if a file, else every manifest below it, sorted. */
async function filesOf(path: string): Promise<string[]> {
  let info;
  try {
    info = await stat(path);
  } catch (err) {
    throw new UsageError(
      `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  if (!info.isDirectory()) return [path];
  const entries = (await readdir(path, { withFileTypes: true })).sort((a, b) =>
    a.name.localeCompare(b.name),
  );
  const files: string[] = [];
  for (const entry of entries) {
    const child = join(path, entry.name);
    if (entry.isDirectory() || (entry.isSymbolicLink() && (await stat(child)).isDirectory())) {
      files.push(...(await filesOf(child)));
    } else if (MANIFEST_EXTENSIONS.some((ext) => entry.name.endsWith(ext))) {
      files.push(child);
    }
  }
  return files;
}

async function readAll(stream: AsyncIterable<Buffer | string>): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += chunk.toString();
  return text;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

interface Document {
  file: string;
  object: Json;
}

function metadataString(object: Json, key: string): string | undefined {
  const value = isObject(object.metadata) ? object.metadata[key] : undefined;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Objects of a document: itself, or the items of a List. */
function objectsOf(value: unknown): Json[] {
  if (!isObject(value)) return [];
  if (typeof value.kind === 'string' && value.kind.endsWith('List') && Array.isArray(value.items)) {
    return value.items.filter(isObject);
  }
  return [value];
}

/** `kubecell validate <args>`: the arguments after `validate`. */
export async function runValidate(args: readonly string[], io: CliIo): Promise<number> {
  const env = io.env ?? process.env;
  let options: Options | 'help';
  try {
    options = parseArgs(args, env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr.write(`kubecell: ${err.message}\n\n${VALIDATE_USAGE}`);
    return EXIT_USAGE;
  }
  if (options === 'help') {
    io.stdout.write(VALIDATE_USAGE);
    return EXIT_OK;
  }

  const documents: Document[] = [];
  const problems: string[] = [];
  let fileCount = 0;
  try {
    for (const path of options.files) {
      for (const file of path === '-' ? ['-'] : await filesOf(path)) {
        fileCount++;
        const label = file === '-' ? '<stdin>' : file;
        const text =
          file === '-' ? await readAll(io.stdin ?? process.stdin) : await readFile(file, 'utf8');
        parseAllDocuments(text).forEach((doc, index) => {
          const error = doc.errors[0];
          if (error) {
            problems.push(
              `${label}: document ${index + 1}: invalid YAML: ${error.message.split('\n')[0]}`,
            );
            return;
          }
          for (const object of objectsOf(doc.toJS())) documents.push({ file: label, object });
        });
      }
    }
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr.write(`kubecell: ${err.message}\n`);
    return EXIT_USAGE;
  }

  // Namespaces and VirtualClusters the input itself declares, for the offline rules.
  const namespaces = new Map<string, Record<string, string>>();
  for (const { object } of documents) {
    const name = metadataString(object, 'name');
    if (object.apiVersion === 'v1' && object.kind === 'Namespace' && name !== undefined) {
      const labels =
        isObject(object.metadata) && isObject(object.metadata.labels) ? object.metadata.labels : {};
      namespaces.set(
        name,
        Object.fromEntries(Object.entries(labels).map(([k, v]) => [k, String(v)])),
      );
    }
  }
  const hosted = new Map<string, VirtualClusterSummary[]>();

  let checked = 0;
  let skipped = 0;
  const report = (document: Document, errors: readonly FieldError[]): void => {
    const kind = typeof document.object.kind === 'string' ? document.object.kind : '<no kind>';
    const name =
      metadataString(document.object, 'name') ??
      metadataString(document.object, 'generateName') ??
      '<no name>';
    for (const error of errors)
      problems.push(`${document.file}: ${kind}/${name}: ${error.message}`);
  };

  for (const document of documents) {
    const { object } = document;
    const apiVersion = object.apiVersion;
    if (typeof apiVersion !== 'string' || apiVersion.split('/')[0] !== GROUP) {
      skipped++;
      continue;
    }
    checked++;
    const info = kindInfo(apiVersion, object.kind);
    if (info === undefined) {
      report(document, [
        KIND_NAMES.includes(object.kind as never)
          ? fieldError('apiVersion', 'Unsupported value', `supported values: "${GROUP}/v1alpha1"`, {
              value: apiVersion,
            })
          : fieldError(
              'kind',
              'Unsupported value',
              `supported values: ${KIND_NAMES.map((k) => `"${k}"`).join(', ')}`,
              {
                value: object.kind,
              },
            ),
      ]);
      continue;
    }
    const errors = validateObject(info, object);
    const namespace = metadataString(object, 'namespace');
    if (info.kind === 'Cell') {
      const error = cellNamespaceError(namespace, options.controllerNamespace);
      if (error) errors.push(error);
    }
    if (info.kind === 'GPUCellPool') {
      const error = provisionerLabelError(object);
      if (error) errors.push(error);
    }
    if (
      (info.kind === 'VirtualCluster' || info.kind === 'VirtualClusterPlan') &&
      namespace !== undefined
    ) {
      if (namespaces.has(namespace)) {
        const error = hostNamespaceError(info.kind, namespace, namespaces.get(namespace));
        if (error) errors.push(error);
      }
      if (info.kind === 'VirtualCluster') {
        const name = metadataString(object, 'name') ?? '';
        const others = hosted.get(namespace) ?? [];
        const error = namespaceTakenError(namespace, name, others);
        if (error) errors.push(error);
        others.push({ metadata: { name, namespace } });
        hosted.set(namespace, others);
      }
    }
    report(document, errors);
  }

  for (const line of problems) io.stdout.write(`${line}\n`);
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  io.stderr.write(
    `kubecell validate: ${plural(checked, 'KubeCell object')} checked in ${plural(fileCount, 'file')} ` +
      `(${plural(skipped, 'other document')} skipped): ${problems.length === 0 ? 'no errors' : plural(problems.length, 'error')}\n` +
      `note: ${OFFLINE_NOTE}\n`,
  );
  return problems.length === 0 ? EXIT_OK : EXIT_INVALID;
}
