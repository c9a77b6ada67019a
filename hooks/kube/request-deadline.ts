/**
 * Per-request options for @kubernetes/client-node that abort a request the apiserver has not
 * answered within `timeoutMs` (the client has no timeout of its own), so that no lookup lingers.
 * A call passes `requestDeadline(ms)` as its last argument; an aborted request rejects with an
 * Error named `AbortError`.
 */
import { Observable, type ConfigurationOptions } from '@kubernetes/client-node';

export function requestDeadline(timeoutMs: number): ConfigurationOptions {
  return {
    middleware: [
      {
        pre: (context) => {
          context.setSignal(AbortSignal.timeout(timeoutMs));
          return new Observable(Promise.resolve(context));
        },
        post: (context) => new Observable(Promise.resolve(context)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}
