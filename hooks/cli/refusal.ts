/**
 * Why `kubecell kubeconfig` cannot print the kubeconfig, as the user should read it: a Refusal
 * is printed as `kubecell: <message>` and exits 1. The API server's failures are worded here:
 * who asked, where, and what is missing.
 */
import { ApiException } from '@kubernetes/client-node';
import { isJsonObject } from '../json/json.js';
import { describeFailure } from '../kube/api-failure.js';

/** Why the command cannot print the kubeconfig: printed as `kubecell: <message>`, exit 1. */
export class Refusal extends Error {}

/** Where the command reads, for messages: namespace, context, API server and user. */
export interface Target {
  namespace: string;
  context: string;
  server: string;
  user: string;
}

/** The apiserver's Status of a failed call, when its body is one. */
export function statusOf(err: ApiException<unknown>): Record<string, unknown> | undefined {
  let body: unknown = err.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body) as unknown;
    } catch {
      return undefined;
    }
  }
  return isJsonObject(body) ? body : undefined;
}

/** `get <resource> in namespace <ns>` refused: who asked, what is missing, who grants it. */
export function forbidden(
  err: ApiException<unknown>,
  resource: string,
  target: Target,
  why: string,
): Refusal {
  const message = typeof statusOf(err)?.message === 'string' ? String(statusOf(err)?.message) : '';
  return new Refusal(
    `forbidden: you may not get ${resource} in namespace ${target.namespace} ` +
      `(context ${target.context}, user ${target.user}). ${why}` +
      (message === '' ? '' : `\nThe API server said: ${message}`),
  );
}

/** A failure that is neither NotFound nor Forbidden: credentials, network, anything else. */
export function otherFailure(err: unknown, what: string, target: Target): Refusal {
  if (err instanceof ApiException && err.code === 401) {
    return new Refusal(
      `${what}: the API server ${target.server} refused the credentials of user ${target.user} ` +
        `(context ${target.context}): 401 Unauthorized; log in again or check your kubeconfig`,
    );
  }
  if (!(err instanceof ApiException)) {
    return new Refusal(
      `${what}: cannot reach the API server ${target.server} (context ${target.context}): ` +
        describeFailure(err),
    );
  }
  return new Refusal(`${what} failed: ${describeFailure(err)}`);
}

/** Whether `err` is the API server answering with HTTP status `code`. */
export function isApiStatus(err: unknown, code: number): err is ApiException<unknown> {
  return err instanceof ApiException && err.code === code;
}
