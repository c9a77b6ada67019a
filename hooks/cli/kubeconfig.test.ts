// `kubecell kubeconfig` against a fake API server: a local HTTP server answering the two reads
// the command makes (the VirtualCluster, then the Secret its status names) the way
// kube-apiserver does, including its NotFound, Forbidden and Unauthorized Status bodies. The
// real apiserver and RBAC are exercised by test/cluster/e2e/tenancy-rbac.test.ts.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { REPO_ROOT } from '../admission/testing.js';
import { EXIT_INVALID, EXIT_OK, EXIT_USAGE, USAGE, runCli } from './cli.js';
import { KUBECONFIG_USAGE } from './kubeconfig.js';

const CLI = fileURLToPath(new URL('./kubecell.ts', import.meta.url));
const UID = '7f0c1d2e-0000-4000-8000-000000000001';
// Not the naming scheme's kubecell-<name>-<uid>-admin-kubeconfig: the command must take the
// name from status.credential.secretName, not guess it.
const SECRET = 'published-by-kubecell';
const PUBLISHED = `apiVersion: v1
kind: Config
clusters:
  - name: default
    cluster:
      server: https://192.0.2.10:31443
      certificate-authority-data: ZmFrZQ==
users:
  - name: default
    user: {client-certificate-data: ZmFrZQ==, client-key-data: ZmFrZQ==}
contexts:
  - name: default
    context: {cluster: default, user: default}
current-context: default
`;

type Json = Record<string, unknown>;

function status(code: number, reason: string, message: string, details: Json = {}): Json {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, details, code };
}

function readyCondition(status: string, reason: string, message: string): Json {
  return { type: 'Ready', status, reason, message, lastTransitionTime: '2026-01-01T00:00:00Z' };
}

function virtualCluster(name: string, namespace: string, vcStatus: Json | undefined): Json {
  return {
    apiVersion: 'kubecell.io/v1alpha1',
    kind: 'VirtualCluster',
    metadata: { name, namespace, uid: UID },
    spec: { cellRef: { name: 'cell-a' }, classRef: { name: 'small' } },
    ...(vcStatus === undefined ? {} : { status: vcStatus }),
  };
}

const READY: Json = {
  phase: 'Ready',
  conditions: [readyCondition('True', 'Ready', 'The k3k Cluster is ready.')],
  credential: { secretName: SECRET },
};

function secret(namespace: string, data: Record<string, string> | undefined, ownerUid = UID): Json {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: SECRET,
      namespace,
      ownerReferences: [
        {
          apiVersion: 'kubecell.io/v1alpha1',
          kind: 'VirtualCluster',
          name: 'vc',
          uid: ownerUid,
          controller: true,
        },
      ],
    },
    ...(data === undefined ? {} : { data }),
  };
}

/** A fake apiserver: path → [code, body]; bearer token `bob` is forbidden everything. */
class FakeApiServer {
  readonly routes = new Map<string, [number, Json]>();
  readonly requests: Array<{ path: string; authorization?: string }> = [];
  crdInstalled = true;
  private server?: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((request: IncomingMessage, response) => {
      const path = (request.url ?? '').split('?')[0] as string;
      this.requests.push({ path, authorization: request.headers.authorization });
      const reply = (code: number, body: Json): void => {
        response.writeHead(code, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
      };
      const token = /^Bearer (.*)$/.exec(request.headers.authorization ?? '')?.[1];
      if (token === 'expired') return reply(401, status(401, 'Unauthorized', 'Unauthorized'));
      const vc =
        /^\/apis\/kubecell\.io\/v1alpha1\/namespaces\/([^/]+)\/virtualclusters\/([^/]+)$/.exec(
          path,
        );
      const sec = /^\/api\/v1\/namespaces\/([^/]+)\/secrets\/([^/]+)$/.exec(path);
      if (token === 'bob' && (vc || sec)) {
        const [, namespace, name] = (vc ?? sec) as RegExpExecArray;
        const [resource, group] = vc ? ['virtualclusters', 'kubecell.io'] : ['secrets', ''];
        return reply(
          403,
          status(
            403,
            'Forbidden',
            `${vc ? 'virtualclusters.kubecell.io' : 'secrets'} "${name}" is forbidden: User "bob" ` +
              `cannot get resource "${resource}" in API group "${group}" in the namespace "${namespace}"`,
            { name, group, kind: resource },
          ),
        );
      }
      if (vc && !this.crdInstalled) {
        return reply(
          404,
          status(404, 'NotFound', 'the server could not find the requested resource'),
        );
      }
      const found = this.routes.get(path);
      if (found) return reply(...found);
      const [, , name] = (vc ?? sec ?? []) as string[];
      return reply(
        404,
        status(
          404,
          'NotFound',
          `${vc ? 'virtualclusters.kubecell.io' : 'secrets'} "${name}" not found`,
          {
            name,
            group: vc ? 'kubecell.io' : '',
            kind: vc ? 'virtualclusters' : 'secrets',
          },
        ),
      );
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }

  setVirtualCluster(namespace: string, name: string, vcStatus: Json | undefined): void {
    this.routes.set(`/apis/kubecell.io/v1alpha1/namespaces/${namespace}/virtualclusters/${name}`, [
      200,
      virtualCluster(name, namespace, vcStatus),
    ]);
  }

  setSecret(namespace: string, body: Json): void {
    this.routes.set(`/api/v1/namespaces/${namespace}/secrets/${SECRET}`, [200, body]);
  }
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(argv: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env,
  });
  return { code, stdout, stderr };
}

/** A kubeconfig with a context per user (token = user name), all on `server`. */
function writeKubeconfig(
  file: string,
  server: string,
  users: Array<{ user: string; namespace?: string }>,
  current: string,
): string {
  writeFileSync(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'fake', cluster: { server, 'insecure-skip-tls-verify': true } }],
      users: users.map(({ user }) => ({ name: user, user: { token: user } })),
      contexts: users.map(({ user, namespace }) => ({
        name: `${user}@fake`,
        context: { cluster: 'fake', user, ...(namespace ? { namespace } : {}) },
      })),
      'current-context': current,
    }),
  );
  return file;
}

describe('kubecell kubeconfig (hooks/cli)', function () {
  this.timeout(30_000);
  const dir = mkdtempSync(join(tmpdir(), 'kubecell-kubeconfig-'));
  const api = new FakeApiServer();
  let env: NodeJS.ProcessEnv;

  before(async () => {
    await api.start();
    const kubeconfig = writeKubeconfig(
      join(dir, 'config'),
      api.url,
      [
        { user: 'alice', namespace: 'tenant-a' },
        { user: 'bob' },
        { user: 'expired', namespace: 'tenant-a' },
      ],
      'alice@fake',
    );
    env = { KUBECONFIG: kubeconfig, HOME: dir };
  });

  after(async () => {
    await api.stop();
  });

  beforeEach(() => {
    api.routes.clear();
    api.requests.length = 0;
    api.crdInstalled = true;
    api.setVirtualCluster('tenant-a', 'vc', READY);
    api.setSecret(
      'tenant-a',
      secret('tenant-a', { 'kubeconfig.yaml': Buffer.from(PUBLISHED).toString('base64') }),
    );
  });

  it('prints the published kubeconfig, byte for byte, read with the current context', async () => {
    const result = await run(['kubeconfig', 'vc', '-n', 'tenant-a'], env);
    expect(result.stderr).to.equal('');
    expect(result.code).to.equal(EXIT_OK);
    expect(result.stdout).to.equal(PUBLISHED);
    expect(api.requests).to.deep.equal([
      {
        path: '/apis/kubecell.io/v1alpha1/namespaces/tenant-a/virtualclusters/vc',
        authorization: 'Bearer alice',
      },
      // The name comes from status.credential.secretName.
      { path: `/api/v1/namespaces/tenant-a/secrets/${SECRET}`, authorization: 'Bearer alice' },
    ]);
  });

  it("defaults the namespace to the context's, else default; accepts --namespace=, -nNS", async () => {
    expect((await run(['kubeconfig', 'vc'], env)).code).to.equal(EXIT_OK);
    expect((await run(['kubeconfig', '--namespace=tenant-a', 'vc'], env)).code).to.equal(EXIT_OK);
    expect((await run(['kubeconfig', '-ntenant-a', 'vc'], env)).code).to.equal(EXIT_OK);
    api.requests.length = 0;
    await run(['kubeconfig', 'vc', '--context', 'bob@fake'], env);
    expect(api.requests[0]?.path).to.equal(
      '/apis/kubecell.io/v1alpha1/namespaces/default/virtualclusters/vc',
    );
  });

  it('-o writes the file with mode 0600, replacing one that was readable by others', async () => {
    const file = join(dir, 'vc.kubeconfig');
    writeFileSync(file, 'old', { mode: 0o644 });
    const result = await run(['kubeconfig', 'vc', '-n', 'tenant-a', '-o', file], env);
    expect(result.code, result.stderr).to.equal(EXIT_OK);
    expect(result.stdout).to.equal('');
    expect(result.stderr).to.equal(
      `kubecell: wrote the admin kubeconfig of VirtualCluster tenant-a/vc to ${file} (mode 0600); ` +
        'whoever can read it is cluster-admin of that cluster\n',
    );
    expect(readFileSync(file, 'utf8')).to.equal(PUBLISHED);
    expect(statSync(file).mode & 0o777).to.equal(0o600);

    const fresh = join(dir, 'fresh.kubeconfig');
    expect((await run(['kubeconfig', 'vc', `--output=${fresh}`], env)).code).to.equal(EXIT_OK);
    expect(statSync(fresh).mode & 0o777).to.equal(0o600);

    const nowhere = await run(['kubeconfig', 'vc', '-o', join(dir, 'absent', 'x')], env);
    expect(nowhere.code).to.equal(EXIT_INVALID);
    expect(nowhere.stderr).to.equal(`kubecell: cannot write ${join(dir, 'absent', 'x')}: ENOENT\n`);
  });

  it('says when the VirtualCluster does not exist, or KubeCell is not installed', async () => {
    const missing = await run(['kubeconfig', 'nope', '-n', 'tenant-a'], env);
    expect(missing.code).to.equal(EXIT_INVALID);
    expect(missing.stdout).to.equal('');
    expect(missing.stderr).to.equal(
      'kubecell: VirtualCluster tenant-a/nope not found (context alice@fake); ' +
        'kubectl get virtualclusters.kubecell.io -n tenant-a lists those that exist\n',
    );
    api.crdInstalled = false;
    const noCrd = await run(['kubeconfig', 'vc'], env);
    expect(noCrd.code).to.equal(EXIT_INVALID);
    expect(noCrd.stderr).to.equal(
      `kubecell: the API server ${api.url} (context alice@fake) serves no ` +
        'virtualclusters.kubecell.io/v1alpha1: KubeCell is not installed on that cluster\n',
    );
  });

  it('says why a VirtualCluster is not Ready: its phase and Ready condition', async () => {
    api.setVirtualCluster('tenant-a', 'vc', {
      phase: 'Provisioning',
      conditions: [readyCondition('False', 'Provisioning', 'The k3k Cluster is not ready yet.')],
    });
    const provisioning = await run(['kubeconfig', 'vc'], env);
    expect(provisioning.code).to.equal(EXIT_INVALID);
    expect(provisioning.stdout).to.equal('');
    expect(provisioning.stderr).to.equal(
      'kubecell: VirtualCluster tenant-a/vc is not Ready: phase Provisioning; ' +
        'Ready=False Provisioning: The k3k Cluster is not ready yet.\n' +
        'Its children are being created; try again when it is Ready: ' +
        'kubectl get virtualclusters.kubecell.io vc -n tenant-a -w\n',
    );
    // The Secret is not read.
    expect(api.requests.map((request) => request.path)).to.have.length(1);

    api.setVirtualCluster('tenant-a', 'vc', {
      phase: 'Failed',
      conditions: [readyCondition('False', 'NamespaceOccupied', 'tenant-a already hosts vc0.')],
    });
    const failed = await run(['kubeconfig', 'vc'], env);
    expect(failed.code).to.equal(EXIT_INVALID);
    expect(failed.stderr).to.match(
      /^kubecell: VirtualCluster tenant-a\/vc is not Ready: phase Failed; Ready=False NamespaceOccupied: tenant-a already hosts vc0\.\nFailed is terminal/,
    );

    api.setVirtualCluster('tenant-a', 'vc', {
      ...READY,
      phase: 'Degraded',
      conditions: [readyCondition('False', 'LeaseStale', 'The lease is stale.')],
    });
    const degraded = await run(['kubeconfig', 'vc'], env);
    expect(degraded.code).to.equal(EXIT_INVALID);
    expect(degraded.stderr).to.include(`still in Secret ${SECRET} (key kubeconfig.yaml)`);

    api.setVirtualCluster('tenant-a', 'vc', undefined);
    const fresh = await run(['kubeconfig', 'vc'], env);
    expect(fresh.code).to.equal(EXIT_INVALID);
    expect(fresh.stderr).to.match(
      /^kubecell: VirtualCluster tenant-a\/vc is not Ready: phase \(none\); no Ready condition\nIt has no status yet/,
    );
  });

  it('says when the kubeconfig is not published, or the Secret is not the one KubeCell published', async () => {
    api.setVirtualCluster('tenant-a', 'vc', { ...READY, credential: {} });
    const unnamed = await run(['kubeconfig', 'vc'], env);
    expect(unnamed.code).to.equal(EXIT_INVALID);
    expect(unnamed.stderr).to.match(
      /^kubecell: VirtualCluster tenant-a\/vc is Ready but its kubeconfig is not published yet \(status.credential.secretName is empty\)/,
    );

    api.setVirtualCluster('tenant-a', 'vc', READY);
    api.routes.delete(`/api/v1/namespaces/tenant-a/secrets/${SECRET}`);
    const absent = await run(['kubeconfig', 'vc'], env);
    expect(absent.code).to.equal(EXIT_INVALID);
    expect(absent.stderr).to.equal(
      `kubecell: the kubeconfig Secret tenant-a/${SECRET} that VirtualCluster vc names in ` +
        'status.credential.secretName does not exist (yet): KubeCell publishes it again on its ' +
        'next sync; try again in a moment\n',
    );

    api.setSecret('tenant-a', secret('tenant-a', { other: 'eA==' }));
    const noKey = await run(['kubeconfig', 'vc'], env);
    expect(noKey.code).to.equal(EXIT_INVALID);
    expect(noKey.stderr).to.match(/has no key kubeconfig\.yaml/);

    api.setSecret('tenant-a', secret('tenant-a', { 'kubeconfig.yaml': 'eA==' }, 'another-uid'));
    const foreign = await run(['kubeconfig', 'vc'], env);
    expect(foreign.code).to.equal(EXIT_INVALID);
    expect(foreign.stdout).to.equal('');
    expect(foreign.stderr).to.match(
      /is not controlled by VirtualCluster vc \(UID 7f0c1d2e-.*\): refusing to hand out a credential KubeCell did not publish/,
    );
  });

  it('says which permission is missing when forbidden', async () => {
    const vcDenied = await run(['kubeconfig', 'vc', '-n', 'tenant-a', '--context=bob@fake'], env);
    expect(vcDenied.code).to.equal(EXIT_INVALID);
    expect(vcDenied.stdout).to.equal('');
    expect(vcDenied.stderr).to.equal(
      'kubecell: forbidden: you may not get virtualclusters.kubecell.io in namespace tenant-a ' +
        '(context bob@fake, user bob). Reading a VirtualCluster needs get on ' +
        'virtualclusters.kubecell.io there, which the built-in ClusterRoles view, edit and admin ' +
        'grant once KubeCell is installed: ask your platform team for a RoleBinding to edit or ' +
        'admin in that namespace (docs/tenants.md).\n' +
        'The API server said: virtualclusters.kubecell.io "vc" is forbidden: User "bob" cannot ' +
        'get resource "virtualclusters" in API group "kubecell.io" in the namespace "tenant-a"\n',
    );

    // Only the Secret is refused: what the built-in view role allows.
    api.routes.set(`/api/v1/namespaces/tenant-a/secrets/${SECRET}`, [
      403,
      status(
        403,
        'Forbidden',
        `secrets "${SECRET}" is forbidden: User "alice" cannot get resource "secrets" in API group "" in the namespace "tenant-a"`,
      ),
    ]);
    const secretDenied = await run(['kubeconfig', 'vc'], env);
    expect(secretDenied.code).to.equal(EXIT_INVALID);
    expect(secretDenied.stderr).to.match(
      /^kubecell: forbidden: you may not get secrets in namespace tenant-a \(context alice@fake, user alice\)\. The kubeconfig is in a Secret: reading it needs get on secrets there, which the built-in ClusterRoles edit and admin grant and view does not\./,
    );
  });

  it('says when the credentials are refused or the API server cannot be reached', async () => {
    const refused = await run(['kubeconfig', 'vc', '--context', 'expired@fake'], env);
    expect(refused.code).to.equal(EXIT_INVALID);
    expect(refused.stderr).to.equal(
      `kubecell: reading VirtualCluster tenant-a/vc: the API server ${api.url} refused the ` +
        'credentials of user expired (context expired@fake): 401 Unauthorized; log in again or ' +
        'check your kubeconfig\n',
    );

    const closed = new FakeApiServer();
    await closed.start();
    await closed.stop();
    const unreachable = writeKubeconfig(
      join(dir, 'unreachable'),
      closed.url,
      [{ user: 'alice' }],
      'alice@fake',
    );
    const down = await run(['kubeconfig', 'vc'], { KUBECONFIG: unreachable, HOME: dir });
    expect(down.code).to.equal(EXIT_INVALID);
    expect(down.stderr).to.match(
      new RegExp(
        `^kubecell: reading VirtualCluster default/vc: cannot reach the API server ${closed.url} \\(context alice@fake\\): .*ECONNREFUSED`,
      ),
    );
  });

  it('finds the kubeconfig as kubectl does: --kubeconfig, $KUBECONFIG merged, ~/.kube/config', async () => {
    // Two files: the first one's current context wins; a file that does not exist is skipped.
    const second = writeKubeconfig(join(dir, 'second'), api.url, [{ user: 'bob' }], 'bob@fake');
    const merged = [join(dir, 'config'), join(dir, 'absent'), second].join(delimiter);
    const viaMerge = await run(['kubeconfig', 'vc'], { KUBECONFIG: merged, HOME: dir });
    expect(viaMerge.code, viaMerge.stderr).to.equal(EXIT_OK);
    expect(api.requests.at(-1)?.authorization).to.equal('Bearer alice');

    const viaFlag = await run(['kubeconfig', 'vc', '-n', 'tenant-a', '--kubeconfig', second], {
      KUBECONFIG: join(dir, 'config'),
      HOME: dir,
    });
    expect(viaFlag.code).to.equal(EXIT_INVALID);
    expect(viaFlag.stderr).to.match(/context bob@fake, user bob/);

    const home = mkdtempSync(join(tmpdir(), 'kubecell-home-'));
    const none = await run(['kubeconfig', 'vc'], { HOME: home });
    expect(none.code).to.equal(EXIT_INVALID);
    expect(none.stderr).to.equal(
      `kubecell: no kubeconfig: KUBECONFIG is not set and ${join(home, '.kube', 'config')} ` +
        'does not exist; pass --kubeconfig <file> or set KUBECONFIG\n',
    );
    const nothingThere = await run(['kubeconfig', 'vc'], {
      KUBECONFIG: join(dir, 'absent'),
      HOME: home,
    });
    expect(nothingThere.code).to.equal(EXIT_INVALID);
    expect(nothingThere.stderr).to.equal(
      `kubecell: KUBECONFIG=${join(dir, 'absent')} names no file that exists\n`,
    );
  });

  it('exits 2 on usage errors, an unknown --context or an unreadable --kubeconfig', async () => {
    const cases: Array<[string[], string]> = [
      [['kubeconfig'], 'kubecell: kubeconfig needs the name of a VirtualCluster'],
      [
        ['kubeconfig', 'a', 'b'],
        'kubecell: kubeconfig takes one VirtualCluster name, got "a", "b"',
      ],
      [['kubeconfig', 'vc', '-n'], 'kubecell: -n needs a value'],
      [['kubeconfig', 'vc', '-o', ''], 'kubecell: -o needs a value'],
      [['kubeconfig', 'vc', '--wait'], 'kubecell: unknown argument "--wait"'],
    ];
    for (const [argv, message] of cases) {
      const result = await run(argv, env);
      expect(result.code, argv.join(' ')).to.equal(EXIT_USAGE);
      expect(result.stderr).to.equal(`${message}\n\n${KUBECONFIG_USAGE}`);
      expect(result.stdout).to.equal('');
    }
    const context = await run(['kubeconfig', 'vc', '--context', 'carol'], env);
    expect(context.code).to.equal(EXIT_USAGE);
    expect(context.stderr).to.equal(
      `kubecell: no context "carol" in KUBECONFIG=${env.KUBECONFIG} (it has alice@fake, bob@fake, expired@fake)\n`,
    );
    const file = await run(['kubeconfig', 'vc', '--kubeconfig', join(dir, 'absent')], env);
    expect(file.code).to.equal(EXIT_USAGE);
    expect(file.stderr).to.equal(`kubecell: cannot read ${join(dir, 'absent')}: ENOENT\n`);
    expect(api.requests).to.deep.equal([]);
  });

  it('prints its help and exits 0', async () => {
    for (const argv of [
      ['kubeconfig', '--help'],
      ['kubeconfig', 'vc', '-h'],
      ['help', 'kubeconfig'],
    ]) {
      const result = await run(argv, env);
      expect(result.code).to.equal(EXIT_OK);
      expect(result.stdout).to.equal(KUBECONFIG_USAGE);
    }
    expect(KUBECONFIG_USAGE).to.include('mode 0600');
    expect(KUBECONFIG_USAGE).to.include('the built-in admin and edit');
    expect(USAGE).to.include('kubecell kubeconfig <name> [-n <namespace>] [-o <file>]');
  });

  it('runs as a program and exits once done (KUBECONFIG from its environment)', async () => {
    const child = spawn(CLI, ['kubeconfig', 'vc', '-n', 'tenant-a'], {
      cwd: REPO_ROOT,
      env: { ...process.env, KUBECONFIG: env.KUBECONFIG },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, stderr).to.equal(0);
    expect(stdout).to.equal(PUBLISHED);
  });
});
