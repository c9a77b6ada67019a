/**
 * Hostile connections for memory-bounds.test.ts, each kind one a security review used against
 * the hook server (issue 23): a body held back after its first byte, an unfinished large body,
 * a gzip bomb, a connection that never says anything (on the webhook port: never starts its TLS
 * handshake), and an idle keep-alive connection. Every attacker records what the server answered
 * (the status line, if any) and whether the server closed it; it writes with backpressure, so
 * this process does not buffer what the server refuses to read. Loopback only.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { gzipSync } from 'node:zlib';

export type AttackKind =
  'slow body' | 'unfinished body' | 'gzip bomb' | 'silent' | 'idle keep-alive';

export const ATTACK_KINDS: readonly AttackKind[] = [
  'slow body',
  'unfinished body',
  'gzip bomb',
  'silent',
  'idle keep-alive',
];

/** Where attackers connect: one of the two ports. */
export interface Target {
  name: 'hooks' | 'webhook';
  port: number;
  /** Set for the webhook port: its certificate authority. */
  ca?: string;
  path: string;
  /** Bytes an unfinished body announces (all but the last are sent). */
  unfinishedBytes: number;
}

export interface Attacker {
  socket: Socket;
  /** The status of the server's answer, if one came. */
  status(): number | undefined;
  closedByServer(): boolean;
}

const CHUNK = Buffer.alloc(64 * 1024, 'x');

/**
 * A gzip bomb: about 1.2 MB that inflates to 1.2 GB of zeros (75 gzip members of 16 MiB each,
 * which a gunzip stream reads one after another), as in the review.
 */
export function gzipBomb(): Buffer {
  const member = gzipSync(Buffer.alloc(16 * 1024 * 1024), { level: 9 });
  return Buffer.concat(Array.from({ length: 75 }, () => member));
}

function headers(target: Target, extra: string): string {
  return `POST ${target.path} HTTP/1.1\r\nHost: kubecell-hooks\r\nContent-Type: application/json\r\n${extra}\r\n`;
}

/** Writes `total` bytes (the last chunk cut to fit) with backpressure, until done or closed. */
function pump(socket: Socket, total: number, body?: Buffer): void {
  let sent = 0;
  const next = (): void => {
    while (sent < total && !socket.destroyed) {
      const chunk = body
        ? body.subarray(sent, sent + CHUNK.length)
        : CHUNK.subarray(0, Math.min(CHUNK.length, total - sent));
      sent += chunk.length;
      if (!socket.write(chunk)) {
        socket.once('drain', next);
        return;
      }
    }
  };
  next();
}

/** What an attacker of `kind` sends once connected. */
function send(kind: AttackKind, socket: Socket, target: Target, bomb: Buffer): void {
  switch (kind) {
    case 'slow body':
      socket.write(headers(target, 'Content-Length: 1048576\r\n') + '{');
      return;
    case 'unfinished body':
      socket.write(headers(target, `Content-Length: ${target.unfinishedBytes}\r\n`));
      pump(socket, target.unfinishedBytes - 1);
      return;
    case 'gzip bomb':
      socket.write(headers(target, `Content-Length: ${bomb.length}\r\nContent-Encoding: gzip\r\n`));
      pump(socket, bomb.length, bomb);
      return;
    case 'silent':
      return;
    case 'idle keep-alive':
      socket.write('GET /healthz HTTP/1.1\r\nHost: kubecell-hooks\r\n\r\n');
  }
}

/** Opens one attacker; resolves once it is connected and has started sending. */
function openAttacker(kind: AttackKind, target: Target, bomb: Buffer): Promise<Attacker> {
  return new Promise((resolve, reject) => {
    // A silent client on the webhook port never starts its TLS handshake.
    const tls = target.ca !== undefined && kind !== 'silent';
    const socket = tls
      ? tlsConnect({ host: '127.0.0.1', port: target.port, servername: 'localhost', ca: target.ca })
      : netConnect(target.port, '127.0.0.1');
    let head = '';
    let closedByServer = false;
    socket.on('data', (chunk: Buffer) => {
      if (head.length < 64) head += chunk.toString('latin1', 0, 64);
    });
    socket.once('end', () => (closedByServer = true));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE') closedByServer = true;
    });
    socket.once('error', reject);
    socket.once(tls ? 'secureConnect' : 'connect', () => {
      socket.off('error', reject);
      send(kind, socket, target, bomb);
      resolve({
        socket,
        status: () => {
          const match = /^HTTP\/1\.1 (\d{3}) /.exec(head);
          return match ? Number(match[1]) : undefined;
        },
        closedByServer: () => closedByServer || socket.destroyed,
      });
    });
  });
}

/** `count` attackers of `kind` against `target`, opened together. */
export function attack(
  kind: AttackKind,
  target: Target,
  count: number,
  bomb: Buffer,
): Promise<Attacker[]> {
  return Promise.all(Array.from({ length: count }, () => openAttacker(kind, target, bomb)));
}

/**
 * How the attackers fared, e.g. `{"415 closed": 300}`: the status the server answered (none when
 * it did not), and whether it closed the connection (`closed`) or it is still held (`open`).
 * Read before the test closes its side.
 */
export function outcomes(attackers: readonly Attacker[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const attacker of attackers) {
    const status = attacker.status();
    const key = `${status === undefined ? 'no answer' : status} ${attacker.closedByServer() ? 'closed' : 'open'}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}
