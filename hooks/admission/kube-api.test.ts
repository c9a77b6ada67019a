import { expect } from 'chai';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { stringify } from 'yaml';
import {
  createApiClient,
  inClusterConnection,
  kubeconfigConnection,
  loadConnection,
} from './kube-api.js';
import { LookupError, createKubernetesLookup } from './lookup.js';
import { selfSignedCertificate, type TestCertificate } from './test-support.js';

interface Seen {
  path: string;
  authorization?: string;
  clientCertificate?: string;
}

describe('Kubernetes API lookups (hooks/admission/kube-api.ts, lookup.ts)', function () {
  this.timeout(20000);
  let serverCert: TestCertificate;
  let clientCert: TestCertificate;
  let server: Server;
  let base: string;
  const seen: Seen[] = [];
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
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        seen.push({
          path: req.url ?? '',
          authorization: req.headers.authorization,
          clientCertificate: peer?.subject?.CN as string | undefined,
        });
        const json = (status: number, body: unknown): void => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        };
        const url = req.url ?? '';
        if (url === '/api/v1/namespaces/tenant-a') {
          json(200, {
            kind: 'Namespace',
            metadata: { name: 'tenant-a', labels: { 'kubecell.io/host-namespace': 'true' } },
          });
        } else if (url === '/api/v1/namespaces/bare') {
          json(200, { kind: 'Namespace', metadata: { name: 'bare' } });
        } else if (url === '/api/v1/namespaces/missing') {
          json(404, { kind: 'Status', code: 404, message: 'namespaces "missing" not found' });
        } else if (url === '/api/v1/namespaces/secret') {
          json(403, {
            kind: 'Status',
            code: 403,
            message:
              'namespaces "secret" is forbidden: User "system:serviceaccount:kubecell-system:kubecell-hooks" cannot get resource "namespaces"',
          });
        } else if (
          url ===
          '/apis/kubecell.io/v1alpha1/virtualclusters?labelSelector=kubecell.io%2Fcell%3Dcell1'
        ) {
          json(200, { items: [{ metadata: { name: 'team-a', namespace: 'tenant-a' } }] });
        } else if (url === '/apis/kubecell.io/v1alpha1/namespaces/tenant-a/virtualclusters') {
          json(200, { items: [] });
        } else if (url.startsWith('/apis/kubecell.io/v1alpha1/namespaces/slow/')) {
          // never answers
        } else {
          json(404, { message: `unexpected ${url}` });
        }
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => {
    server.closeAllConnections();
    server.close();
  });

  beforeEach(() => {
    seen.length = 0;
  });

  function kubeconfig(user: Record<string, unknown>): string {
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
              server: `${base}/`,
              'certificate-authority-data': Buffer.from(serverCert.cert).toString('base64'),
            },
          },
        ],
        users: [{ name: 'u', user }],
      }),
    );
    return file;
  }

  it('reads namespaces and lists VirtualClusters with a kubeconfig token', async () => {
    const connection = loadConnection({ KUBECONFIG: kubeconfig({ token: 'tok-1' }) });
    const lookup = createKubernetesLookup(createApiClient(connection));
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

  it('authenticates with a client certificate from the kubeconfig', async () => {
    const connection = kubeconfigConnection(
      kubeconfig({
        'client-certificate': clientCert.certFile,
        'client-key-data': readFileSync(clientCert.keyFile).toString('base64'),
      }),
    );
    await createKubernetesLookup(createApiClient(connection)).namespaceLabels('tenant-a');
    expect(seen[0]).to.include({ clientCertificate: 'kubecell-hooks', authorization: undefined });
  });

  it('uses the in-cluster ServiceAccount, re-reading the rotated token', async () => {
    const sa = mkdtempSync(join(tmpdir(), 'kubecell-sa-'));
    writeFileSync(join(sa, 'ca.crt'), serverCert.cert);
    writeFileSync(join(sa, 'token'), 'sa-token-1\n');
    const port = (server.address() as AddressInfo).port;
    const connection = inClusterConnection(
      { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(port) },
      sa,
    );
    expect(connection?.server).to.equal(base);
    const lookup = createKubernetesLookup(createApiClient(connection!));
    await lookup.namespaceLabels('tenant-a');
    writeFileSync(join(sa, 'token'), 'sa-token-2\n');
    await lookup.namespaceLabels('tenant-a');
    expect(seen.map((s) => s.authorization)).to.deep.equal([
      'Bearer sa-token-1',
      'Bearer sa-token-2',
    ]);
    expect(inClusterConnection({}, sa)).to.equal(undefined);
  });

  it('turns failures into LookupErrors that say what was read and why', async () => {
    const connection = kubeconfigConnection(kubeconfig({ token: 't' }));
    const lookup = createKubernetesLookup(createApiClient(connection));
    const failure = async (run: () => Promise<unknown>): Promise<LookupError> => {
      try {
        await run();
      } catch (err) {
        expect(err).to.be.instanceOf(LookupError);
        return err as LookupError;
      }
      throw new Error('expected a failure');
    };
    expect((await failure(() => lookup.namespaceLabels('secret'))).message).to.equal(
      'reading Namespace "secret" failed: HTTP 403: namespaces "secret" is forbidden: User ' +
        '"system:serviceaccount:kubecell-system:kubecell-hooks" cannot get resource "namespaces"',
    );
    const untrusted = createKubernetesLookup(
      createApiClient({ ...connection, ca: clientCert.cert }),
    );
    expect((await failure(() => untrusted.namespaceLabels('tenant-a'))).message).to.match(
      /^reading Namespace "tenant-a" failed: self[- ]signed certificate/,
    );
    const refused = createKubernetesLookup(
      createApiClient({ ...connection, server: 'https://127.0.0.1:1' }),
    );
    expect((await failure(() => refused.listVirtualClusters({ namespace: 'x' }))).message).to.match(
      /^listing VirtualClusters in namespace "x" failed: connect ECONNREFUSED 127\.0\.0\.1:1/,
    );
  });

  it('gives up on an apiserver that does not answer', async () => {
    const client = createApiClient(kubeconfigConnection(kubeconfig({ token: 't' })));
    let error: unknown;
    try {
      await client.getJson('/apis/kubecell.io/v1alpha1/namespaces/slow/virtualclusters', {
        timeoutMs: 100,
      });
    } catch (err) {
      error = err;
    }
    expect((error as Error).message).to.equal('no answer within 100 ms');
  });

  it('explains a kubeconfig it cannot use', () => {
    const file = join(dir, 'broken-kubeconfig');
    writeFileSync(file, stringify({ 'current-context': 'nope', contexts: [] }));
    expect(() => loadConnection({ KUBECONFIG: file })).to.throw(
      `kubeconfig ${file}: no context named "nope"`,
    );
  });
});
