/**
 * Thrown by a hook when the request is well formed JSON but its content cannot be acted on (a
 * parent whose spec breaks its schema). The server answers 400 with the message; Metacontroller
 * then changes nothing, keeps every child and records the message as a SyncError event.
 */
export class InvalidHookInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidHookInputError';
  }
}
