/** The hook server process (hooks/main.ts) with the admission webhook's HTTPS listener. */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import type { AdmissionReview } from './review.js';
import { admissionReview, sample, selfSignedCertificate, type TestCertificate } from './testing.js';

const MAIN = fileURLToPath(new URL('../main.ts', import.meta.url));

interface Started {
  child: ChildProcess;
  lines: () => Array<Record<string, unknown>>;
  stderr: () => string;
  exited: Promise<number | null>;
}

function start(env: Record<string, string>): Started {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, KUBECELL_PORT: '0', KUBECELL_WEBHOOK_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return {
    child,
    lines: () =>
      stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    stderr: () => stderr,
    exited,
  };
}

async function waitForLine(started: Started, msg: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 15000;
  for (;;) {
    const line = started.lines().find((entry) => entry.msg === msg);
    if (line) return line;
    if (Date.now() > deadline || started.child.exitCode !== null) {
      throw new Error(
        `no "${msg}" line; stdout: ${JSON.stringify(started.lines())} stderr: ${started.stderr()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function post(port: number, path: string, body: unknown, ca: string): Promise<AdmissionReview> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        servername: 'localhost',
        ca,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve(JSON.parse(text) as AdmissionReview));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('hook server process with the admission webhook (hooks/main.ts)', function () {
  this.timeout(30000);
  let cert: TestCertificate;
  let kubeconfig: string;
  let started: Started | undefined;

  before(() => {
    cert = selfSignedCertificate('kubecell-hooks.kubecell-system.svc');
    // An apiserver nobody listens on: lookups fail, and the webhook must say so.
    kubeconfig = join(mkdtempSync(join(tmpdir(), 'kubecell-main-')), 'kubeconfig');
    writeFileSync(
      kubeconfig,
      stringify({
        'current-context': 'x',
        contexts: [{ name: 'x', context: { cluster: 'x', user: 'x' } }],
        clusters: [{ name: 'x', cluster: { server: 'https://127.0.0.1:1' } }],
        users: [{ name: 'x', user: { token: 'x' } }],
      }),
    );
  });

  afterEach(() => {
    if (started?.child.exitCode === null) started.child.kill('SIGKILL');
    started = undefined;
  });

  it('serves both webhooks over HTTPS, counts them on /metrics, and stops on SIGTERM', async () => {
    started = start({
      KUBECELL_TLS_CERT_FILE: cert.certFile,
      KUBECELL_TLS_KEY_FILE: cert.keyFile,
      KUBECONFIG: kubeconfig,
    });
    const webhook = await waitForLine(started, 'admission webhook listening');
    const hooks = await waitForLine(started, 'hook server listening');
    const port = Number(webhook.port);

    const allowed = await post(
      port,
      '/admission/validate',
      admissionReview('CREATE', sample('21-virtualnodeclass-full.yaml')),
      cert.cert,
    );
    expect(allowed.response.allowed).to.equal(true);

    const unchecked = await post(
      port,
      '/admission/validate',
      admissionReview('CREATE', sample('51-virtualcluster-full.yaml')),
      cert.cert,
    );
    expect(unchecked.response.allowed).to.equal(false);
    expect(unchecked.response.status?.message).to.match(
      /cannot check the rules that need other objects: reading Namespace "tenant-a" failed: connect ECONNREFUSED 127\.0\.0\.1:1/,
    );

    const labelled = await post(
      port,
      '/admission/mutate',
      admissionReview('CREATE', sample('51-virtualcluster-full.yaml')),
      cert.cert,
    );
    expect(labelled.response.patchType).to.equal('JSONPatch');

    // The watch cache cannot reach that apiserver either: the webhook was ready without it, each
    // collection's failure is logged once however often it is retried, and reviews read live.
    const lookups = started
      .lines()
      .find((l) => l.msg === 'admission webhook lookups use the Kubernetes API');
    expect(lookups?.cache).to.equal('watch');
    await waitForLine(started, 'admission webhook cache watch failed');
    // Its four collections fail alike, and are retried after 1 s: long enough to see them all.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const failed = started.lines().filter((l) => l.msg === 'admission webhook cache watch failed');
    expect(failed.map((l) => l.collection)).to.have.members([
      'Namespaces',
      'Cells in namespace kubecell-system',
      'VirtualNodeClasses',
      'VirtualClusters',
    ]);
    expect(
      failed.every((l) => l.level === 'warn' && String(l.error).includes('ECONNREFUSED')),
    ).to.equal(true);

    const metrics = await (await fetch(`http://127.0.0.1:${String(hooks.port)}/metrics`)).text();
    expect(metrics).to.include(
      'kubecell_admission_reviews_total{webhook="validate",kind="VirtualNodeClass",operation="CREATE",result="allowed"} 1',
    );
    expect(metrics).to.include(
      'kubecell_admission_reviews_total{webhook="validate",kind="VirtualCluster",operation="CREATE",result="error"} 1',
    );

    started.child.kill('SIGTERM');
    expect(await started.exited).to.equal(0);
    expect(started.lines().map((l) => l.msg)).to.include('hook server stopped');
  });

  it('reads live only, and starts no watch, with KUBECELL_WEBHOOK_CACHE=off', async () => {
    started = start({
      KUBECELL_TLS_CERT_FILE: cert.certFile,
      KUBECELL_TLS_KEY_FILE: cert.keyFile,
      KUBECONFIG: kubeconfig,
      KUBECELL_WEBHOOK_CACHE: 'off',
    });
    const webhook = await waitForLine(started, 'admission webhook listening');
    const unchecked = await post(
      Number(webhook.port),
      '/admission/validate',
      admissionReview('CREATE', sample('51-virtualcluster-full.yaml')),
      cert.cert,
    );
    expect(unchecked.response.status?.message).to.include('reading Namespace "tenant-a" failed');
    const messages = started.lines().map((l) => l.msg);
    expect(messages).to.not.include('admission webhook cache watch failed');
    expect(
      started.lines().find((l) => l.msg === 'admission webhook lookups use the Kubernetes API')
        ?.cache,
    ).to.equal('off');
  });

  it('runs without the webhook when no TLS files are set, and warns that it does', async () => {
    started = start({});
    await waitForLine(started, 'hook server listening');
    const warning = started
      .lines()
      .find(
        (l) =>
          l.msg ===
          'admission webhook disabled: set KUBECELL_TLS_CERT_FILE and KUBECELL_TLS_KEY_FILE to serve it',
      );
    expect(warning).to.deep.include({
      level: 'warn',
      unset: ['KUBECELL_TLS_CERT_FILE', 'KUBECELL_TLS_KEY_FILE'],
    });
    expect(String(warning?.effect)).to.include('failurePolicy: Fail');
    expect(String(warning?.fix)).to.include('kubecell-webhook-tls');
  });

  it('exits 2 on half a TLS configuration, 1 when the certificate cannot be read', async () => {
    started = start({ KUBECELL_TLS_CERT_FILE: cert.certFile });
    expect(await started.exited).to.equal(2);
    expect(started.stderr()).to.include(
      'KUBECELL_TLS_CERT_FILE is set but KUBECELL_TLS_KEY_FILE is not',
    );

    started = start({
      KUBECELL_TLS_CERT_FILE: join(cert.dir, 'absent.crt'),
      KUBECELL_TLS_KEY_FILE: cert.keyFile,
      KUBECONFIG: kubeconfig,
    });
    expect(await started.exited).to.equal(1);
    const line = started.lines().find((l) => l.msg === 'admission webhook cannot start');
    expect(String(line?.error)).to.match(
      /^cannot read the webhook TLS certificate \(KUBECELL_TLS_CERT_FILE\) .*absent\.crt: ENOENT/,
    );
  });
});
