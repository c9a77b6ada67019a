import { ApiException, FetchError } from '@kubernetes/client-node';
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { stringify } from 'yaml';
import { SERVICE_ACCOUNT_DIR, loadKubeConfig } from '../kube/kube-config.js';
import { describeFailure } from '../kube/api-failure.js';
import { LookupError, createKubernetesLookup } from './lookup.js';
import { selfSignedCertificate, type TestCertificate } from './testing.js';

interface Seen {
  /** Path and decoded query, e.g. `/apis/...?labelSelector=kubecell.io/cell=cell1`. */
  request: string;
  authorization?: string;
  clientCertificate?: string;
}

const ENV_KEYS = ['KUBECONFIG', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT', 'HOME'];

/** Runs `run` with these variables of process.env (client-node reads it), unset when undefined. */
function withEnv<T>(vars: Record<string, string | undefined>, run: () => T): T {
  const saved = Object.fromEntries(ENV_KEYS.map((key) => [key, process.env[key]]));
  const apply = (values: Record<string, string | undefined>): void => {
    for (const key of ENV_KEYS) {
      const value = values[key];
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  };
  apply({ HOME: saved.HOME, ...vars });
  try {
    return run();
  } finally {
    apply(saved);
  }
}

async function lookupFailure(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (err) {
    expect(err).to.be.instanceOf(LookupError);
    return (err as LookupError).message;
  }
  throw new Error('expected a failure');
}

const FORBIDDEN =
  'namespaces "secret" is forbidden: User "system:serviceaccount:kubecell-system:kubecell-hooks" ' +
  'cannot get resource "namespaces"';

describe('Kubernetes API lookups through client-node (hooks/kube/kube-config.ts, hooks/admission/lookup.ts)', function () {
  this.timeout(20000);
  let serverCert: TestCertificate;
  let clientCert: TestCertificate;
  let server: Server;
  let base: string;
  let port: number;
  const seen: Seen[] = [];
  let connections = 0;
  const dir = mkdtempSync(join(tmpdir(), 'kubecell-kube-api-'));

  before(async () => {
    serverCert = selfSignedCertificate('fake-apiserver', dir, 'server');
    clientCert = selfSignedCertificate('kubecell-hooks', dir, 'client');
    server = createServer(
      {
        cert: serverCert.cert,
        key: readFileSync(serverCert.keyFile),
        requestCert: true,
        rejectUnauthorized: false,
      },
      (req, res) => {
        const url = new URL(req.url ?? '/', 'https://x');
        const request = `${url.pathname}${url.search === '' ? '' : `?${decodeURIComponent(url.search.slice(1))}`}`;
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        seen.push({
          request,
          authorization: req.headers.authorization,
          clientCertificate: peer?.subject?.CN as string | undefined,
        });
        const json = (status: number, body: unknown): void => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        };
        if (request === '/api/v1/namespaces/tenant-a') {
          json(200, {
            kind: 'Namespace',
            metadata: { name: 'tenant-a', labels: { 'kubecell.io/host-namespace': 'true' } },
          });
        } else if (request === '/api/v1/namespaces/bare') {
          json(200, { kind: 'Namespace', metadata: { name: 'bare' } });
        } else if (request === '/api/v1/namespaces/missing') {
          json(404, { kind: 'Status', code: 404, message: 'namespaces "missing" not found' });
        } else if (request === '/api/v1/namespaces/secret') {
          json(403, { kind: 'Status', code: 403, message: FORBIDDEN });
        } else if (
          request ===
          '/apis/kubecell.io/v1alpha1/virtualclusters?labelSelector=kubecell.io/cell=cell1'
        ) {
          json(200, { items: [{ metadata: { name: 'team-a', namespace: 'tenant-a' } }] });
        } else if (request === '/apis/kubecell.io/v1alpha1/namespaces/tenant-a/virtualclusters') {
          json(200, { items: [] });
        } else if (
          request === '/apis/kubecell.io/v1alpha1/namespaces/kubecell-system/cells/cell1'
        ) {
          json(200, {
            apiVersion: 'kubecell.io/v1alpha1',
            kind: 'Cell',
            metadata: { name: 'cell1', namespace: 'kubecell-system', uid: 'cell1-uid' },
            spec: {
              managedClusterRef: { name: 'cell1' },
              namespaceSelector: { matchLabels: { team: 'a' } },
            },
            status: { phase: 'Ready' },
          });
        } else if (request === '/apis/kubecell.io/v1alpha1/virtualnodeclasses/small') {
          json(200, {
            apiVersion: 'kubecell.io/v1alpha1',
            kind: 'VirtualNodeClass',
            metadata: { name: 'small', uid: 'small-uid' },
            spec: { storageClassName: 'topolvm-provisioner' },
          });
        } else if (request === '/apis/kubecell.io/v1alpha1/virtualnodeclasses/secret') {
          json(403, { kind: 'Status', code: 403, message: 'virtualnodeclasses is forbidden' });
        } else if (request.startsWith('/apis/kubecell.io/v1alpha1/namespaces/slow/')) {
          // never answers
        } else {
          json(404, { message: `unexpected ${request}` });
        }
      },
    );
    server.on('secureConnection', () => (connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    base = `https://127.0.0.1:${port}`;
  });

  after(() => {
    server.closeAllConnections();
    server.close();
  });

  beforeEach(() => {
    seen.length = 0;
  });

  function kubeconfig(
    user: Record<string, unknown>,
    cluster: Record<string, unknown> = {},
  ): string {
    const file = join(dir, `kubeconfig-${Math.random().toString(36).slice(2)}`);
    writeFileSync(
      file,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'test',
        contexts: [{ name: 'test', context: { cluster: 'c', user: 'u' } }],
        clusters: [
          {
            name: 'c',
            cluster: {
              server: base,
              'certificate-authority-data': Buffer.from(serverCert.cert).toString('base64'),
              ...cluster,
            },
          },
        ],
        users: [{ name: 'u', user }],
      }),
    );
    return file;
  }

  /** The lookup of the hook server with only a KUBECONFIG variable set. */
  function lookupFromKubeconfig(file: string, requestTimeoutMs?: number) {
    const { kubeConfig, source } = withEnv({ KUBECONFIG: file }, () => loadKubeConfig());
    expect(source).to.equal(`KUBECONFIG ${file}`);
    return createKubernetesLookup(kubeConfig, { requestTimeoutMs });
  }

  it('reads namespaces and lists VirtualClusters with a KUBECONFIG token', async () => {
    const lookup = lookupFromKubeconfig(kubeconfig({ token: 'tok-1' }));
    expect(await lookup.namespaceLabels('tenant-a')).to.deep.equal({
      'kubecell.io/host-namespace': 'true',
    });
    expect(await lookup.namespaceLabels('bare')).to.deep.equal({});
    expect(await lookup.namespaceLabels('missing')).to.equal(undefined);
    expect(
      await lookup.listVirtualClusters({ labelSelector: 'kubecell.io/cell=cell1' }),
    ).to.deep.equal([{ metadata: { name: 'team-a', namespace: 'tenant-a' } }]);
    expect(await lookup.listVirtualClusters({ namespace: 'tenant-a' })).to.deep.equal([]);
    expect(seen.map((s) => s.authorization)).to.deep.equal(Array(5).fill('Bearer tok-1'));
  });

  it('reuses one kept-alive TLS connection for successive lookups (client-node opens one per request)', async () => {
    const lookup = lookupFromKubeconfig(kubeconfig({ token: 'tok-reuse' }));
    const before = connections;
    for (let i = 0; i < 4; i++) {
      expect(await lookup.namespaceLabels('bare')).to.deep.equal({});
      expect(await lookup.getVirtualNodeClass('small')).to.not.equal(undefined);
    }
    expect(seen).to.have.length(8);
    expect(seen.every((s) => s.authorization === 'Bearer tok-reuse')).to.equal(true);
    // At most one: an earlier lookup with the same credentials may have opened it already.
    expect(connections - before, 'new TLS connections for 8 lookups').to.be.at.most(1);
  });

  it('reads a Cell and a VirtualNodeClass: only their namespaceSelector, undefined when absent', async () => {
    const lookup = lookupFromKubeconfig(kubeconfig({ token: 'tok-2' }));
    expect(await lookup.getCell('kubecell-system', 'cell1')).to.deep.equal({
      metadata: { name: 'cell1', namespace: 'kubecell-system', uid: 'cell1-uid' },
      spec: { namespaceSelector: { matchLabels: { team: 'a' } } },
    });
    expect(await lookup.getCell('kubecell-system', 'missing')).to.equal(undefined);
    expect(await lookup.getVirtualNodeClass('small')).to.deep.equal({
      metadata: { name: 'small', uid: 'small-uid' },
      spec: {},
    });
    expect(await lookup.getVirtualNodeClass('missing')).to.equal(undefined);
    expect(await lookupFailure(() => lookup.getVirtualNodeClass('secret'))).to.equal(
      'reading VirtualNodeClass "secret" failed: HTTP 403: virtualnodeclasses is forbidden',
    );
    expect(seen.map((s) => s.request)).to.deep.equal([
      '/apis/kubecell.io/v1alpha1/namespaces/kubecell-system/cells/cell1',
      '/apis/kubecell.io/v1alpha1/namespaces/kubecell-system/cells/missing',
      '/apis/kubecell.io/v1alpha1/virtualnodeclasses/small',
      '/apis/kubecell.io/v1alpha1/virtualnodeclasses/missing',
      '/apis/kubecell.io/v1alpha1/virtualnodeclasses/secret',
    ]);
  });

  it('authenticates with a client certificate from the kubeconfig', async () => {
    const lookup = lookupFromKubeconfig(
      kubeconfig({
        'client-certificate': clientCert.certFile,
        'client-key-data': readFileSync(clientCert.keyFile).toString('base64'),
      }),
    );
    await lookup.namespaceLabels('tenant-a');
    expect(seen[0]).to.include({ clientCertificate: 'kubecell-hooks', authorization: undefined });
  });

  it('uses the in-cluster ServiceAccount unless KUBECONFIG is set', async () => {
    const prefix = mkdtempSync(join(tmpdir(), 'kubecell-sa-'));
    const sa = join(prefix, SERVICE_ACCOUNT_DIR);
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, 'ca.crt'), serverCert.cert);
    writeFileSync(join(sa, 'token'), 'sa-token-1');
    const inCluster = { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: `${port}` };

    const loaded = withEnv(inCluster, () => loadKubeConfig(prefix));
    expect(loaded.source).to.equal(`in-cluster ServiceAccount (${sa})`);
    expect(loaded.kubeConfig.getCurrentCluster()?.server).to.equal(base);
    await createKubernetesLookup(loaded.kubeConfig).namespaceLabels('tenant-a');

    const file = kubeconfig({ token: 'from-kubeconfig' });
    const overridden = withEnv({ ...inCluster, KUBECONFIG: file }, () => loadKubeConfig(prefix));
    expect(overridden.source).to.equal(`KUBECONFIG ${file}`);
    await createKubernetesLookup(overridden.kubeConfig).namespaceLabels('tenant-a');

    expect(seen.map((s) => s.authorization)).to.deep.equal([
      'Bearer sa-token-1',
      'Bearer from-kubeconfig',
    ]);
  });

  it('falls back to ~/.kube/config, and says so when there are no credentials at all', () => {
    const home = mkdtempSync(join(tmpdir(), 'kubecell-home-'));
    expect(() => withEnv({ HOME: home }, () => loadKubeConfig())).to.throw(
      'no Kubernetes API credentials for the webhook lookups: KUBECONFIG unset, not in a Pod ' +
        `with a ServiceAccount, and no ${join(home, '.kube', 'config')}`,
    );
    mkdirSync(join(home, '.kube'));
    writeFileSync(join(home, '.kube', 'config'), readFileSync(kubeconfig({ token: 't' })));
    const loaded = withEnv({ HOME: home }, () => loadKubeConfig());
    expect(loaded.source).to.equal(`kubeconfig ${join(home, '.kube', 'config')}`);
    expect(loaded.kubeConfig.getCurrentCluster()?.server).to.equal(base);
  });

  it('explains a kubeconfig it cannot use', () => {
    const file = join(dir, 'broken-kubeconfig');
    writeFileSync(file, stringify({ 'current-context': 'nope', contexts: [] }));
    expect(() => withEnv({ KUBECONFIG: file }, () => loadKubeConfig())).to.throw(
      `KUBECONFIG ${file}: no cluster for the current context "nope"`,
    );
  });

  it('turns failures into LookupErrors that say what was read and why', async () => {
    const lookup = lookupFromKubeconfig(kubeconfig({ token: 't' }));
    expect(await lookupFailure(() => lookup.namespaceLabels('secret'))).to.equal(
      `reading Namespace "secret" failed: HTTP 403: ${FORBIDDEN}`,
    );
    const untrusted = lookupFromKubeconfig(
      kubeconfig(
        { token: 't' },
        { 'certificate-authority-data': Buffer.from(clientCert.cert).toString('base64') },
      ),
    );
    expect(await lookupFailure(() => untrusted.namespaceLabels('tenant-a'))).to.match(
      /^reading Namespace "tenant-a" failed: self[- ]signed certificate/,
    );
    const refused = lookupFromKubeconfig(
      kubeconfig({ token: 't' }, { server: 'https://127.0.0.1:1' }),
    );
    expect(await lookupFailure(() => refused.listVirtualClusters({ namespace: 'x' }))).to.match(
      /^listing VirtualClusters in namespace "x" failed: connect ECONNREFUSED 127\.0\.0\.1:1$/,
    );
  });

  it('gives up on an apiserver that does not answer', async () => {
    const lookup = lookupFromKubeconfig(kubeconfig({ token: 't' }), 100);
    expect(await lookupFailure(() => lookup.listVirtualClusters({ namespace: 'slow' }))).to.equal(
      'listing VirtualClusters in namespace "slow" failed: no answer within 100 ms',
    );
  });

  describe('describeFailure', () => {
    it("gives the apiserver's code and Status message", () => {
      const status = (code: number, message: string) =>
        JSON.stringify({ kind: 'Status', apiVersion: 'v1', code, message });
      expect(
        describeFailure(
          new ApiException(403, 'Unknown API Status Code!', status(403, FORBIDDEN), {}),
        ),
      ).to.equal(`HTTP 403: ${FORBIDDEN}`);
      expect(
        describeFailure(
          new ApiException(
            500,
            'Unknown API Status Code!',
            { message: 'etcdserver: request timed out' },
            {},
          ),
        ),
      ).to.equal('HTTP 500: etcdserver: request timed out');
      expect(
        describeFailure(
          new ApiException(502, 'Unknown API Status Code!', '<html>Bad Gateway</html>\n', {}),
        ),
      ).to.equal('HTTP 502: <html>Bad Gateway</html>');
      // client-node drops the body of a 401 and says "Unauthorized" itself.
      expect(describeFailure(new ApiException(401, 'Unauthorized', undefined, {}))).to.equal(
        'HTTP 401: Unauthorized',
      );
    });

    it('gives the network error, without the URL client-node adds to it', () => {
      const refused = new FetchError(
        'request to https://10.0.0.1/api/v1/namespaces/a failed, reason: connect ECONNREFUSED 10.0.0.1:443',
        'system',
        Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' }),
      );
      expect(describeFailure(refused)).to.equal('connect ECONNREFUSED 10.0.0.1:443');
      expect(
        describeFailure(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })),
      ).to.equal('socket hang up (ECONNRESET)');
      expect(describeFailure('odd')).to.equal('odd');
    });
  });
});
