/**
 * Thrown by a hook when the request is valid but was built from a copy of the parent that is
 * older than a status write the controller already made (Metacontroller reads parents from its
 * informer cache, `pkg/controller/composite/controller.go` `sync`, and writes the returned status
 * over the latest object, `pkg/dynamic/clientset/clientset.go` `AtomicStatusUpdate`). Acting on
 * it could undo that write. The server answers 429 with `Retry-After`: Metacontroller requeues
 * the parent after that many seconds without recording a SyncError
 * (`processNextWorkItem`, `pkg/controller/composite/controller.go`; `pkg/hooks/webhook.go`).
 */
export class RetryLaterError extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds = 1,
  ) {
    super(message);
    this.name = 'RetryLaterError';
  }
}
