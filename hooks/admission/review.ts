/**
 * The AdmissionReview protocol (`admission.k8s.io/v1`): reading a review, and writing the
 * answer the apiserver expects (same uid; a `status` when denying; a base64 JSONPatch when
 * mutating).
 */
import { boundMessage, echo, quoted } from '../json/echo.js';
import { isJsonObject } from '../json/json.js';
import { causeMessage, type FieldError } from '../api/field-errors.js';
import { GROUP } from '../api/kinds.js';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

/** Longest `request.uid` accepted (the apiserver's are 36-character UUIDs). */
export const MAX_UID_CHARS = 128;

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface AdmissionRequest {
  uid: string;
  kind?: GroupVersionKind;
  subResource?: string;
  name?: string;
  namespace?: string;
  operation?: string;
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
}

export interface StatusCause {
  reason: string;
  message: string;
  field: string;
}

/** `metav1.Status` as a webhook returns it; the apiserver passes it on to the client. */
export interface AdmissionStatus {
  code: number;
  reason: string;
  message: string;
  details?: { group?: string; kind?: string; name?: string; causes?: StatusCause[] };
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: AdmissionStatus;
  patchType?: 'JSONPatch';
  /** base64 of the JSON Patch (RFC 6902) document. */
  patch?: string;
  warnings?: string[];
}

export interface AdmissionReview {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: 'AdmissionReview';
  response: AdmissionResponse;
}

export type ParsedReview = { ok: true; request: AdmissionRequest } | { ok: false; message: string };

/** A field of an untrusted body, for a message: a string cut short, or only its JSON type. */
function shown(value: unknown): string {
  if (typeof value === 'string') return quoted(value, 100);
  if (value === undefined || value === null) return 'null';
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/**
 * Checks that `body` is an `admission.k8s.io/v1` AdmissionReview with a request and a uid: what
 * is needed to answer at all. Anything wrong past that point is answered with a denial.
 */
export function parseAdmissionReview(body: unknown): ParsedReview {
  if (!isJsonObject(body)) {
    return { ok: false, message: 'request body must be an AdmissionReview object' };
  }
  if (body.kind !== 'AdmissionReview') {
    return {
      ok: false,
      message: `request body must be an AdmissionReview, got kind ${shown(body.kind)}`,
    };
  }
  if (body.apiVersion !== ADMISSION_API_VERSION) {
    return {
      ok: false,
      message:
        `AdmissionReview apiVersion ${shown(body.apiVersion)} is not supported; ` +
        `only ${ADMISSION_API_VERSION} is (set admissionReviewVersions: [v1] in the webhook configuration)`,
    };
  }
  const request = body.request;
  if (!isJsonObject(request))
    return { ok: false, message: 'AdmissionReview has no request object' };
  if (typeof request.uid !== 'string' || request.uid === '') {
    return { ok: false, message: 'AdmissionReview request.uid is required (a non-empty string)' };
  }
  // The answer must carry the uid back whole, so a long one cannot be cut like other echoes: it
  // is refused. The apiserver's uids are UUIDs (36 characters).
  if (request.uid.length > MAX_UID_CHARS) {
    return {
      ok: false,
      message:
        `AdmissionReview request.uid is ${request.uid.length} characters long; the apiserver ` +
        `sends a UUID, and at most ${MAX_UID_CHARS} characters are accepted`,
    };
  }
  const kind = isJsonObject(request.kind) ? request.kind : undefined;
  return {
    ok: true,
    request: {
      uid: request.uid,
      kind:
        kind && typeof kind.kind === 'string'
          ? {
              group: optionalString(kind.group) ?? '',
              version: optionalString(kind.version) ?? '',
              kind: kind.kind,
            }
          : undefined,
      subResource: optionalString(request.subResource),
      name: optionalString(request.name),
      namespace: optionalString(request.namespace),
      operation: optionalString(request.operation),
      object: request.object ?? undefined,
      oldObject: request.oldObject ?? undefined,
      dryRun: request.dryRun === true,
    },
  };
}

export function reviewOf(response: AdmissionResponse): AdmissionReview {
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response };
}

export function allow(uid: string, extra: Partial<AdmissionResponse> = {}): AdmissionResponse {
  return { uid, allowed: true, ...extra };
}

/**
 * A denial that is not about fields: a malformed request (400) or a failed lookup (500). The
 * message is bounded (hooks/json/echo.ts), whatever it quotes.
 */
export function deny(
  uid: string,
  code: number,
  reason: string,
  message: string,
): AdmissionResponse {
  return { uid, allowed: false, status: { code, reason, message: boundMessage(message) } };
}

/** Field errors listed in a denial; the rest are counted. */
export const MAX_LISTED_ERRORS = 20;

/**
 * A denial listing field errors, shaped like the apiserver's own 422 Invalid:
 * `Cell.kubecell.io "cell1" is invalid: [spec.foo: ..., spec.bar: ...]`.
 */
export function denyInvalid(
  uid: string,
  kind: string,
  name: string | undefined,
  errors: readonly FieldError[],
): AdmissionResponse {
  return { uid, allowed: false, status: invalidStatus(kind, name, errors) };
}

export function invalidStatus(
  kind: string,
  name: string | undefined,
  errors: readonly FieldError[],
): AdmissionStatus {
  const listed = errors.slice(0, MAX_LISTED_ERRORS);
  const more = errors.length - listed.length;
  const messages = listed.map((e) => e.message);
  if (more > 0) messages.push(`and ${more} more error${more === 1 ? '' : 's'}`);
  const list = messages.length === 1 ? (messages[0] ?? '') : `[${messages.join(', ')}]`;
  const shownName = name === undefined ? undefined : echo(name);
  return {
    code: 422,
    reason: 'Invalid',
    message: boundMessage(`${kind}.${GROUP} ${quoted(name ?? '')} is invalid: ${list}`, 16_384),
    details: {
      group: GROUP,
      kind,
      ...(shownName !== undefined ? { name: shownName } : {}),
      causes: listed.map((e) => ({ reason: e.reason, message: causeMessage(e), field: e.field })),
    },
  };
}
