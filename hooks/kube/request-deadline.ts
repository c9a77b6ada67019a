/**
 * Per-request options for @kubernetes/client-node that abort a request the apiserver has not
 * answered within `timeoutMs` (the client has no timeout of its own), so that no lookup lingers.
 * A call passes `requestDeadline(ms)` as its last argument; an aborted request rejects with an
 * Error named `AbortError`. The same middleware makes the request reuse a kept-alive connection
 * (connection-reuse.ts).
 */
import { Observable, type ConfigurationOptions } from '@kubernetes/client-node';
import { reusedAgent } from './connection-reuse.js';

export function requestDeadline(timeoutMs: number): ConfigurationOptions {
  return {
    middleware: [
      {
        pre: (context) => {
          context.setSignal(AbortSignal.timeout(timeoutMs));
          const agent = context.getAgent();
          if (agent !== undefined) context.setAgent(reusedAgent(agent));
          return new Observable(Promise.resolve(context));
        },
        post: (context) => new Observable(Promise.resolve(context)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}
