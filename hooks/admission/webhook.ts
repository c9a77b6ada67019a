/**
 * The two admission webhooks as functions of one AdmissionReview request, independent of HTTP:
 *
 *   - validate: CREATE and UPDATE of the five kinds are checked against the generated schema
 *     and its CEL rules (validate-object.ts) and the rules that need the request or other
 *     objects (rules.ts, cross-object.ts). DELETE and CONNECT are allowed. A failed lookup denies, saying so.
 *   - mutate: VirtualClusters and plans get the labels kubecell.io/cell and kubecell.io/class,
 *     GPUCellPools the label kubecell.io/provisioner (mutate.ts); a VirtualCluster being created
 *     gets Metacontroller's finalizer (finalizer.ts).
 */
import { uniqueErrors } from '../api/field-errors.js';
import { GROUP, KIND_NAMES, VERSION, isKindName, KINDS, type KindInfo } from '../api/kinds.js';
import { isJsonObject } from '../json/json.js';
import { LookupError, type ClusterLookup } from './lookup.js';
import { finalizerPatch } from './finalizer.js';
import { labelPatch } from './mutate.js';
import { DEFAULT_LOOKUP_TIMEOUT_MS, crossObjectRules } from './cross-object.js';
import { DEFAULT_CONTROLLER_NAMESPACE, requestRules, type RuleInput } from './rules.js';
import {
  allow,
  deny,
  denyInvalid,
  type AdmissionRequest,
  type AdmissionResponse,
} from './review.js';
import { validateObject } from '../api/validate-object.js';

export interface ValidateOptions {
  lookup: ClusterLookup;
  /** The watch cache (cached-lookup.ts), tried before `lookup`; it may only admit (D38). */
  cache?: ClusterLookup;
  /** Where Cells live (KUBECELL_CONTROLLER_NAMESPACE). */
  controllerNamespace?: string;
  lookupTimeoutMs?: number;
}

type Checked =
  | { ok: true; info: KindInfo; operation: 'CREATE' | 'UPDATE'; object: Record<string, unknown> }
  | { ok: false; response: AdmissionResponse };

const SERVED = KIND_NAMES.map((kind) => `${GROUP}/${VERSION} ${kind}`).join(', ');

/** What every CREATE or UPDATE needs: a kind this webhook serves and an object. */
function check(request: AdmissionRequest): Checked {
  const { uid, kind, operation } = request;
  if (operation === 'DELETE' || operation === 'CONNECT' || request.subResource) {
    // Deletions carry no new object; subresources (status, written by Metacontroller) are not
    // registered, and would not be validated here if they were.
    return { ok: false, response: allow(uid) };
  }
  if (operation !== 'CREATE' && operation !== 'UPDATE') {
    return {
      ok: false,
      response: deny(
        uid,
        400,
        'BadRequest',
        `request.operation ${JSON.stringify(operation ?? null)} is not one of CREATE, UPDATE, DELETE, CONNECT`,
      ),
    };
  }
  if (kind?.group !== GROUP || kind.version !== VERSION || !isKindName(kind.kind)) {
    const got = kind ? `${kind.group}/${kind.version} ${kind.kind}` : 'no request.kind';
    return {
      ok: false,
      response: deny(
        uid,
        400,
        'BadRequest',
        `this webhook serves ${SERVED}; got ${got}: check the rules of the webhook configuration`,
      ),
    };
  }
  if (!isJsonObject(request.object)) {
    return {
      ok: false,
      response: deny(uid, 400, 'BadRequest', `request.object is required for ${operation}`),
    };
  }
  if (operation === 'UPDATE' && !isJsonObject(request.oldObject)) {
    return {
      ok: false,
      response: deny(uid, 400, 'BadRequest', 'request.oldObject is required for UPDATE'),
    };
  }
  return { ok: true, info: KINDS[kind.kind], operation, object: request.object };
}

function objectName(
  request: AdmissionRequest,
  object: Record<string, unknown>,
): string | undefined {
  const name = isJsonObject(object.metadata) ? object.metadata.name : undefined;
  if (typeof name === 'string' && name !== '') return name;
  return request.name || undefined;
}

/** The validating webhook. Throws only on a bug; a failed lookup is a denial. */
export async function validateReview(
  request: AdmissionRequest,
  options: ValidateOptions,
): Promise<AdmissionResponse> {
  const checked = check(request);
  if (!checked.ok) return checked.response;
  const { info, operation, object } = checked;
  const oldObject =
    operation === 'UPDATE' ? (request.oldObject as Record<string, unknown>) : undefined;
  const name = objectName(request, object);
  const namespaceOfObject = isJsonObject(object.metadata) ? object.metadata.namespace : undefined;
  const input: RuleInput = {
    operation,
    kind: info.kind,
    namespace:
      request.namespace || (typeof namespaceOfObject === 'string' ? namespaceOfObject : undefined),
    object,
    oldObject,
    controllerNamespace: options.controllerNamespace ?? DEFAULT_CONTROLLER_NAMESPACE,
  };

  const errors = [...validateObject(info, object, oldObject), ...requestRules(input)];
  try {
    errors.push(
      ...(await crossObjectRules(input, {
        lookup: options.lookup,
        cache: options.cache,
        timeoutMs: options.lookupTimeoutMs ?? DEFAULT_LOOKUP_TIMEOUT_MS,
      })),
    );
  } catch (err) {
    if (!(err instanceof LookupError)) throw err;
    const also = errors.length > 0 ? ` Also: ${errors.map((e) => e.message).join('; ')}.` : '';
    return deny(
      request.uid,
      500,
      'InternalError',
      `${info.kind}.${GROUP} ${JSON.stringify(name ?? '')}: cannot check the rules that need other ` +
        `objects: ${err.message}. The request is refused because the KubeCell webhook fails ` +
        `closed (failurePolicy: Fail); retry, and if this persists check the kubecell-hooks logs ` +
        `and its RBAC.${also}`,
    );
  }
  return errors.length === 0
    ? allow(request.uid)
    : denyInvalid(request.uid, info.kind, name, uniqueErrors(errors));
}

/**
 * The mutating webhook: the labels from the refs and a new VirtualCluster's finalizer, as a
 * JSONPatch, or nothing.
 */
export function mutateReview(request: AdmissionRequest): AdmissionResponse {
  const checked = check(request);
  if (!checked.ok) return checked.response;
  const { info, operation, object } = checked;
  const patch = [
    ...labelPatch(info.kind, object, request.oldObject),
    ...finalizerPatch(info.kind, operation, object),
  ];
  if (patch.length === 0) return allow(request.uid);
  return allow(request.uid, {
    patchType: 'JSONPatch',
    patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
  });
}
