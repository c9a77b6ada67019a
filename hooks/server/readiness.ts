/**
 * Readiness for `GET /readyz`: false until the server listens, false again
 * once shutdown starts so that the Service stops sending new hook calls.
 */
export class Readiness {
  #ready = false;
  #reason = 'starting';

  get ready(): boolean {
    return this.#ready;
  }

  /** Why the server is not ready; empty when it is. */
  get reason(): string {
    return this.#ready ? '' : this.#reason;
  }

  markReady(): void {
    this.#ready = true;
    this.#reason = '';
  }

  markNotReady(reason: string): void {
    this.#ready = false;
    this.#reason = reason;
  }
}
