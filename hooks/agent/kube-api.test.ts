import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, kubeApi, kubeWatch, type AgentApi, type WatchApi } from './kube-api.js';

interface Seen {
  method: string;
  url: string;
  authorization?: string;
  body: string;
}

function read(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString()));
  });
}

/** An apiserver that pages the pods two by two and knows one ConfigMap. */
function fakeApiserver(seen: Seen[]): Server {
  return createServer((request, response) => {
    void read(request).then((body) => {
      seen.push({
        method: request.method ?? '',
        url: request.url ?? '',
        authorization: request.headers.authorization,
        body,
      });
      const url = new URL(request.url ?? '', 'http://x');
      const answer = (status: number, value: unknown): void => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(value));
      };
      if (url.pathname === '/api/v1/pods') {
        const page = url.searchParams.get('continue') === 'p2' ? 2 : 1;
        return answer(200, {
          items:
            page === 1
              ? [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }]
              : [{ metadata: { name: 'c' } }],
          metadata: page === 1 ? { continue: 'p2' } : {},
        });
      }
      if (url.pathname === '/api/v1/namespaces/kubecell-system/configmaps/here')
        return request.method === 'PUT'
          ? answer(409, { kind: 'Status', message: 'the object has been modified' })
          : answer(200, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'here' } });
      if (url.pathname === '/api/v1/namespaces' && url.searchParams.get('watch') === 'true') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write(
          `${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '7' } } })}\n`,
        );
        return response.end(
          `${JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '9' } } })}\n`,
        );
      }
      if (url.pathname === '/api/v1/namespaces/x/secrets')
        return answer(403, { kind: 'Status', message: 'forbidden' });
      if (request.method === 'POST') return answer(201, JSON.parse(body) as unknown);
      return answer(404, { kind: 'Status', message: 'not found' });
    });
  });
}

describe('the agent apiserver client (hooks/agent/kube-api.ts)', () => {
  const seen: Seen[] = [];
  let server: Server;
  let api: AgentApi;
  let watch: WatchApi;

  before(async () => {
    server = fakeApiserver(seen);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [
        {
          name: 'managed',
          server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          skipTLSVerify: true,
        },
      ],
      users: [{ name: 'agent', token: 'agent-token' }],
      contexts: [{ name: 'managed', cluster: 'managed', user: 'agent' }],
      currentContext: 'managed',
    });
    api = kubeApi(kubeConfig, 2000);
    watch = kubeWatch(kubeConfig);
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => seen.splice(0));

  it('lists every page with the credentials of the kubeconfig', async () => {
    const pods = await api.list('/api/v1/pods');
    expect(pods.map((pod) => pod.metadata.name)).to.deep.equal(['a', 'b', 'c']);
    expect(seen.map((request) => request.url)).to.deep.equal([
      '/api/v1/pods?limit=500',
      '/api/v1/pods?limit=500&continue=p2',
    ]);
    expect(seen[0]?.authorization).to.equal('Bearer agent-token');
  });

  it('watches a collection with the query and credentials given, until the apiserver ends it', async () => {
    const events: string[] = [];
    const ended = await new Promise<unknown>((resolve) => {
      void watch(
        '/api/v1/namespaces',
        { labelSelector: 'kubecell.io/host-namespace=true' },
        {
          event: (type, object) => events.push(`${type} ${JSON.stringify(object)}`),
          done: resolve,
        },
      );
    });
    expect(ended).to.equal(undefined);
    expect(events).to.deep.equal([
      'ADDED {"metadata":{"name":"a","resourceVersion":"7"}}',
      'BOOKMARK {"metadata":{"resourceVersion":"9"}}',
    ]);
    const url = new URL(seen[0]?.url ?? '', 'http://x');
    expect(url.searchParams.get('watch')).to.equal('true');
    expect(url.searchParams.get('labelSelector')).to.equal('kubecell.io/host-namespace=true');
    expect(seen[0]?.authorization).to.equal('Bearer agent-token');
  });

  it('ends a refused watch with the HTTP status', async () => {
    const ended = await new Promise<unknown>((resolve) => {
      void watch(
        '/api/v1/namespaces/x/secrets',
        { fieldSelector: 'metadata.name=y' },
        {
          event: () => {},
          done: resolve,
        },
      );
    });
    expect((ended as { statusCode?: number }).statusCode).to.equal(403);
  });

  it('gets an object, or undefined when the apiserver says 404', async () => {
    const found = await api.get('/api/v1/namespaces/kubecell-system/configmaps/here');
    expect(found?.metadata.name).to.equal('here');
    expect(await api.get('/api/v1/namespaces/kubecell-system/configmaps/gone')).to.equal(undefined);
  });

  it('creates with POST, and fails an update with the apiserver message and code', async () => {
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'new' } };
    await api.create('/api/v1/namespaces/kubecell-system/configmaps', configMap);
    expect(seen[0]).to.include({ method: 'POST', body: JSON.stringify(configMap) });
    let failure: unknown;
    try {
      await api.update('/api/v1/namespaces/kubecell-system/configmaps/here', configMap);
    } catch (error) {
      failure = error;
    }
    expect(failure).to.be.instanceOf(ApiError);
    expect((failure as ApiError).status).to.equal(409);
    expect((failure as ApiError).message).to.equal(
      'PUT /api/v1/namespaces/kubecell-system/configmaps/here: HTTP 409: the object has been modified',
    );
  });
});
