/** How a failed Kubernetes API call is told in a message: the apiserver's code and message, or the network error. */
import { ApiException } from '@kubernetes/client-node';
import { isJsonObject } from '../json/json.js';

function apiMessage(err: ApiException<unknown>): string {
  const text = typeof err.body === 'string' ? err.body.trim() : undefined;
  let body: unknown = err.body;
  if (text !== undefined) {
    try {
      body = JSON.parse(text) as unknown;
    } catch {
      if (text !== '') return text.slice(0, 200);
    }
  }
  if (isJsonObject(body) && typeof body.message === 'string') return body.message;
  // client-node's own description, e.g. "Unauthorized" for a 401 (whose body it drops).
  return /^Message: (.*)$/m.exec(err.message)?.[1] ?? '';
}

/** A short description of a failure: the apiserver's code and message, or the network error. */
export function describeFailure(err: unknown): string {
  if (err instanceof ApiException) return `HTTP ${err.code}: ${apiMessage(err)}`;
  if (!(err instanceof Error)) return String(err);
  const code = (err as NodeJS.ErrnoException).code;
  // client-node's fetch wraps a network error as "request to <url> failed, reason: <error>";
  // the URL adds nothing to what was being read.
  const message = (err.message.split('\n')[0] ?? '').replace(
    /^request to \S+ failed, reason: /,
    '',
  );
  return `${message || err.name}${code && !message.includes(code) ? ` (${code})` : ''}`;
}
