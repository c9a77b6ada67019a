/**
 * The admission webhook's rules, applied to the documents of `kubecell validate`: each KubeCell
 * object against the schema and CEL rules of its kind, plus the cross-object rules the input
 * alone can answer, with the Namespaces and VirtualClusters the input itself declares.
 */
import type { VirtualClusterSummary } from '../admission/lookup.js';
import {
  cellNamespaceError,
  hostNamespaceError,
  namespaceTakenError,
  provisionerLabelError,
} from '../admission/rules.js';
import { fieldError, type FieldError } from '../api/field-errors.js';
import { GROUP, KIND_NAMES, kindInfo, type KindInfo } from '../api/kinds.js';
import { validateObject } from '../api/validate-object.js';
import { isJsonObject } from '../json/json.js';
import type { Document } from './manifests.js';

export interface Verdicts {
  /** One line per error: `<file>: <Kind>/<name>: <message>`. */
  problems: string[];
  /** KubeCell objects checked. */
  checked: number;
  /** Documents of other API groups, not checked. */
  skipped: number;
}

/** What the input declares that the cross-object rules read, filled as documents are checked. */
interface InputContext {
  controllerNamespace: string;
  /** The labels of each Namespace in the input. */
  namespaces: Map<string, Record<string, string>>;
  /** The VirtualClusters seen so far, by namespace. */
  hosted: Map<string, VirtualClusterSummary[]>;
}

/** Checks every KubeCell object of the input, in input order; other documents are skipped. */
export function checkDocuments(
  documents: readonly Document[],
  controllerNamespace: string,
): Verdicts {
  const verdicts: Verdicts = { problems: [], checked: 0, skipped: 0 };
  const context: InputContext = {
    controllerNamespace,
    namespaces: namespacesOf(documents),
    hosted: new Map(),
  };
  for (const document of documents) {
    const apiVersion = document.object.apiVersion;
    if (typeof apiVersion !== 'string' || apiVersion.split('/')[0] !== GROUP) {
      verdicts.skipped++;
      continue;
    }
    verdicts.checked++;
    for (const error of checkObject(apiVersion, document.object, context)) {
      verdicts.problems.push(`${document.file}: ${describe(document.object)}: ${error.message}`);
    }
  }
  return verdicts;
}

/** The Namespaces the input declares, with their labels. */
function namespacesOf(documents: readonly Document[]): Map<string, Record<string, string>> {
  const namespaces = new Map<string, Record<string, string>>();
  for (const { object } of documents) {
    const name = metadataString(object, 'name');
    if (object.apiVersion === 'v1' && object.kind === 'Namespace' && name !== undefined) {
      const labels =
        isJsonObject(object.metadata) && isJsonObject(object.metadata.labels)
          ? object.metadata.labels
          : {};
      namespaces.set(
        name,
        Object.fromEntries(Object.entries(labels).map(([k, v]) => [k, String(v)])),
      );
    }
  }
  return namespaces;
}

/** `<Kind>/<name>` of an object, as an error line names it. */
function describe(object: Record<string, unknown>): string {
  const kind = typeof object.kind === 'string' ? object.kind : '<no kind>';
  const name =
    metadataString(object, 'name') ?? metadataString(object, 'generateName') ?? '<no name>';
  return `${kind}/${name}`;
}

function checkObject(
  apiVersion: string,
  object: Record<string, unknown>,
  context: InputContext,
): FieldError[] {
  const info = kindInfo(apiVersion, object.kind);
  if (info === undefined) return [unsupportedKind(apiVersion, object.kind)];
  return [...validateObject(info, object), ...crossObjectErrors(info, object, context)];
}

/** A KubeCell apiVersion with a kind it does not serve, or a kind at another version. */
function unsupportedKind(apiVersion: string, kind: unknown): FieldError {
  return KIND_NAMES.includes(kind as never)
    ? fieldError('apiVersion', 'Unsupported value', `supported values: "${GROUP}/v1alpha1"`, {
        value: apiVersion,
      })
    : fieldError(
        'kind',
        'Unsupported value',
        `supported values: ${KIND_NAMES.map((k) => `"${k}"`).join(', ')}`,
        { value: kind },
      );
}

/** The webhook's rules across objects that the input alone can answer. */
function crossObjectErrors(
  info: KindInfo,
  object: Record<string, unknown>,
  context: InputContext,
): FieldError[] {
  const namespace = metadataString(object, 'namespace');
  const errors: (FieldError | undefined)[] = [];
  if (info.kind === 'Cell') {
    errors.push(cellNamespaceError(namespace, context.controllerNamespace));
  }
  if (info.kind === 'GPUCellPool') errors.push(provisionerLabelError(object));
  if (
    (info.kind === 'VirtualCluster' || info.kind === 'VirtualClusterPlan') &&
    namespace !== undefined
  ) {
    if (context.namespaces.has(namespace)) {
      errors.push(hostNamespaceError(info.kind, namespace, context.namespaces.get(namespace)));
    }
    if (info.kind === 'VirtualCluster') errors.push(namespaceTaken(object, namespace, context));
  }
  return errors.filter((error): error is FieldError => error !== undefined);
}

/** One VirtualCluster per namespace within the input: this one counts for those that follow. */
function namespaceTaken(
  object: Record<string, unknown>,
  namespace: string,
  context: InputContext,
): FieldError | undefined {
  const name = metadataString(object, 'name') ?? '';
  const others = context.hosted.get(namespace) ?? [];
  const error = namespaceTakenError(namespace, name, others);
  others.push({ metadata: { name, namespace } });
  context.hosted.set(namespace, others);
  return error;
}

function metadataString(object: Record<string, unknown>, key: string): string | undefined {
  const value = isJsonObject(object.metadata) ? object.metadata[key] : undefined;
  return typeof value === 'string' && value !== '' ? value : undefined;
}
