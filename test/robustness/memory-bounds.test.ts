// Memory bounded on both ports whatever callers send (issue 23), against the real server:
// hooks/main.ts started as a process, the way the image runs it, with its default settings and
// the admission webhook on HTTPS. For each kind of attack a security review used (a body held
// back after its first byte, an unfinished large body, a gzip bomb, a connection that says
// nothing, on the webhook port not even a TLS handshake, an idle keep-alive connection),
// ATTACKERS connections attack each port at once; while they are held, ordinary hook calls and
// AdmissionReviews are made, as Metacontroller and the apiserver make them (a 429 is retried after
// its Retry-After, as both do). Every one must be answered 200, and the process must stay under
// 512 MiB of resident memory (the bound; the pod's limit is 1 GiB): its peak (VmHWM, which
// the kernel keeps) is asserted after each kind. Last, a Cell sync of 1,000 Nodes (about 28 MB)
// must get through the budget while unfinished bodies fill it; its memory is printed, not
// asserted (parsing and answering it alone takes the process past 512 MiB). The figures (peak
// RSS per round, answers per status, as the attackers saw them and as the server logged them)
// are printed. Nothing asserts how fast an answer comes. Loopback only; about a minute on 2 cores.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { selfSignedCertificate, type TestCertificate } from '../../hooks/admission/testing.js';
import { cellSyncBody as largeCellSyncBody } from '../../bench/bodies.js';
import {
  attack,
  ATTACK_KINDS,
  gzipBomb,
  outcomes,
  type Attacker,
  type AttackKind,
  type Target,
} from './attackers.js';
import {
  admissionCall,
  expectAllowed,
  hookCall,
  startServer,
  unreachableKubeconfig,
  type Answer,
  type Started,
} from './server-process.js';

/** Connections of each kind against each port. */
const ATTACKERS = 300;
/** How long the attackers are held while ordinary calls are made. */
const HOLD_MS = 4_000;
/** The bound on the process's resident memory. */
const MAX_RSS_BYTES = 512 * 1024 * 1024;
/** Tries of an ordinary call answered 429, as Metacontroller and client-go retry them. */
const MAX_TRIES = 10;

const MIB = 1024 * 1024;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `VmRSS` or `VmHWM` of a process, in bytes. */
function memoryOf(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1];
  return Number(kb) * 1024;
}

/** The highest RSS seen while sampling (every 50 ms). */
function sampleRss(pid: number): { stop(): number } {
  let peak = memoryOf(pid, 'VmRSS');
  const timer = setInterval(() => {
    peak = Math.max(peak, memoryOf(pid, 'VmRSS'));
  }, 50);
  return {
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
}

/** Statuses seen by the ordinary calls, every try counted. */
type Tally = Record<string, number>;

/** A call made until it is answered something other than 429, waiting its Retry-After. */
async function answered(call: () => Promise<Answer>, tally: Tally): Promise<Answer> {
  for (let tries = 1; ; tries++) {
    const answer = await call().catch((err: Error): Answer => ({
      status: 0,
      text: err.message,
      headers: {},
    }));
    const key = answer.status === 0 ? `error: ${answer.text}` : String(answer.status);
    tally[key] = (tally[key] ?? 0) + 1;
    if (answer.status !== 429 || tries === MAX_TRIES) return answer;
    await sleep(Number(answer.headers['retry-after'] ?? 1) * 1000);
  }
}

interface Round {
  name: string;
  peakRssMiB: number;
  /** What the attackers saw, per port. */
  hooks: Tally;
  webhook: Tally;
  /** What the server logged, per port: hook calls and admission reviews by status. */
  logged: { hooks: Tally; webhook: Tally };
  calls: Tally;
}

/** The statuses of the hook call and admission review lines logged from `from` on. */
function loggedStatuses(server: Started, from: number): Round['logged'] {
  const logged: Round['logged'] = { hooks: {}, webhook: {} };
  for (const line of server.lines().slice(from)) {
    const tally =
      line.msg === 'hook call'
        ? logged.hooks
        : line.msg === 'admission review'
          ? logged.webhook
          : undefined;
    if (tally !== undefined) tally[String(line.status)] = (tally[String(line.status)] ?? 0) + 1;
  }
  return logged;
}

describe('robustness: memory bounded on both ports whatever callers send (hooks/main.ts)', function () {
  this.timeout(300_000);
  let cert: TestCertificate;
  let server: Started;
  let bomb: Buffer;
  let largeBody: string;
  const rounds: Round[] = [];
  /** VmHWM once every kind has been tried. */
  let peakAfterAttacksMiB = 0;

  before(async () => {
    cert = selfSignedCertificate('kubecell-hooks.kubecell-system.svc');
    server = await startServer(cert, unreachableKubeconfig('kubecell-memory-'));
    bomb = gzipBomb();
    largeBody = JSON.stringify(
      largeCellSyncBody({ nodes: 1000, podsPerNode: 20, hostNamespaces: 20 }, new Date()),
    );
  });

  after(async () => {
    console.log(
      `      ${ATTACKERS} attackers per kind and port, held ${HOLD_MS / 1000} s each; ` +
        `VmHWM after the ${ATTACK_KINDS.length} kinds ${peakAfterAttacksMiB} MiB:\n` +
        rounds
          .map(
            (round) =>
              `        ${round.name}: peak RSS ${round.peakRssMiB} MiB; attackers saw: hooks ` +
              `${JSON.stringify(round.hooks)}, webhook ${JSON.stringify(round.webhook)}; server ` +
              `logged: hooks ${JSON.stringify(round.logged.hooks)}, webhook ` +
              `${JSON.stringify(round.logged.webhook)}; ordinary calls ${JSON.stringify(round.calls)}`,
          )
          .join('\n'),
    );
    await server?.stop();
  });

  /** Ordinary calls while the attackers are held: each must end 200. */
  async function ordinaryCalls(tally: Tally): Promise<void> {
    const until = Date.now() + HOLD_MS;
    do {
      const hook = await answered(() => hookCall(server.hookPort), tally);
      expect(hook.status, `hook call: ${hook.text.slice(0, 300)}`).to.equal(200);
      expectAllowed(await answered(() => admissionCall(server.webhookPort, cert.cert), tally));
    } while (Date.now() < until);
  }

  /** ATTACKERS of `kind` against each port while `during` makes its calls; the round's figures. */
  async function round(
    name: string,
    kind: AttackKind,
    during: (tally: Tally) => Promise<void>,
  ): Promise<void> {
    const targets: Target[] = [
      { name: 'hooks', port: server.hookPort, path: '/hooks/cell/sync', unfinishedBytes: 60e6 },
      {
        name: 'webhook',
        port: server.webhookPort,
        ca: cert.cert,
        path: '/admission/validate',
        unfinishedBytes: Math.floor(7.9 * MIB),
      },
    ];
    const rss = sampleRss(server.child.pid as number);
    const from = server.lines().length;
    let attackers: Attacker[][] = [];
    try {
      attackers = await Promise.all(targets.map((target) => attack(kind, target, ATTACKERS, bomb)));
      await sleep(1000);
      const calls: Tally = {};
      await during(calls);
      const [hooks, webhook] = attackers.map(outcomes) as [Tally, Tally];
      const peakRssMiB = Math.round(rss.stop() / MIB);
      rounds.push({
        name,
        peakRssMiB,
        hooks,
        webhook,
        logged: loggedStatuses(server, from),
        calls,
      });
    } finally {
      rss.stop();
      for (const socket of attackers.flat().map((attacker) => attacker.socket)) socket.destroy();
    }
    expect(server.child.exitCode, 'the server is still running').to.equal(null);
    await sleep(500);
  }

  for (const kind of ATTACK_KINDS) {
    it(`answers ordinary calls 200 under ${ATTACKERS} × "${kind}" on each port, under 512 MiB`, async () => {
      await round(kind, kind, ordinaryCalls);
      const peak = memoryOf(server.child.pid as number, 'VmHWM');
      peakAfterAttacksMiB = Math.round(peak / MIB);
      expect(peak).to.be.below(MAX_RSS_BYTES);
    });
  }

  it(`answers a 1,000-Node Cell sync (28 MB) 200 while ${ATTACKERS} unfinished bodies on each port fill the budget`, async () => {
    await round('unfinished body + 1,000-Node Cell sync', 'unfinished body', async (tally) => {
      const large = await answered(() => hookCall(server.hookPort, largeBody), tally);
      expect(large.status, `1,000-Node Cell sync: ${large.text.slice(0, 300)}`).to.equal(200);
      await ordinaryCalls(tally);
    });
  });
});
