import { expect } from 'chai';
import request from 'supertest';
import type {
  CompositeSyncRequest,
  CompositeSyncResponse,
  DecoratorSyncRequest,
  KubernetesObject,
} from '../metacontroller/protocol.js';
import { createApp } from './app.js';
import { createMetrics } from './metrics.js';
import { Readiness } from './readiness.js';
import { HookRegistry } from './registry.js';
import { captureLogger, type CapturedLogger } from './testing.js';

const SECRET = 'c2VjcmV0LWpvaW4tdG9rZW4tZG8tbm90LWxvZw';

const parent = {
  apiVersion: 'kubecell.io/v1alpha1',
  kind: 'VirtualCluster',
  metadata: { name: 'vc1', namespace: 'tenant-a', uid: '1f0c3c1e-uid', generation: 3 },
  spec: { cellRef: { name: 'cell1' }, classRef: { name: 'small' } },
};

const secretChild = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'vc1-admin-kubeconfig', namespace: 'tenant-a' },
  data: { 'kubeconfig.yaml': SECRET },
};

/**
 * A Cell its schema accepts: a handler that throws on it is a bug (500), whereas a handler
 * throwing on a parent its schema refuses is a malformed request (400, malformed-input.ts).
 */
function validCell(metadata: Record<string, string>) {
  return {
    apiVersion: 'kubecell.io/v1alpha1',
    kind: 'Cell',
    metadata,
    spec: { managedClusterRef: { name: 'cluster1' }, machineProfile: { name: 'a100' } },
  };
}

function syncBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    controller: { apiVersion: 'metacontroller.k8s.io/v1alpha1', kind: 'CompositeController' },
    parent,
    children: {
      'Secret.v1': { 'tenant-a/vc1-admin-kubeconfig': secretChild },
      'Cluster.k3k.io/v1beta1': {},
    },
    related: {},
    finalizing: false,
    ...overrides,
  };
}

interface Harness {
  app: ReturnType<typeof createApp>;
  logs: CapturedLogger;
  calls: CompositeSyncRequest[];
  readiness: Readiness;
}

function harness(options: { bodyLimit?: string; bodyLimitBytes?: number } = {}): Harness {
  const logs = captureLogger();
  const calls: CompositeSyncRequest[] = [];
  const readiness = new Readiness();
  readiness.markReady();
  const registry = new HookRegistry()
    .registerComposite('virtualcluster', {
      sync(req): CompositeSyncResponse {
        calls.push(req);
        return {
          status: { phase: 'Pending', childTypes: Object.keys(req.children) },
          children: [
            {
              apiVersion: 'v1',
              kind: 'Service',
              metadata: { name: `${req.parent.metadata.name}-api` },
            },
          ],
        };
      },
      async finalize(req) {
        await new Promise((resolve) => setImmediate(resolve));
        return { status: null, children: [], finalized: req.finalizing };
      },
    })
    .registerComposite('cell', {
      sync(req) {
        if (req.parent.metadata.name === 'boom') throw new Error('cell boom: inventory missing');
        if (req.parent.metadata.name === 'async-boom') {
          return Promise.reject(new Error('async boom'));
        }
        if (req.parent.metadata.name === 'extra-field') {
          return { children: [], status: {}, labels: { a: 'b' } } as CompositeSyncResponse;
        }
        if (req.parent.metadata.name === 'no-children') {
          return { status: {} } as CompositeSyncResponse;
        }
        return { status: {}, children: [] };
      },
    })
    .registerDecorator('host-namespace', {
      sync: (req: DecoratorSyncRequest<KubernetesObject>) => ({
        labels: { 'pod-security.kubernetes.io/enforce': 'baseline' },
        attachments: [],
        status: { children: Object.keys(req.children).length },
      }),
    });
  const app = createApp({
    registry,
    logger: logs.logger,
    metrics: createMetrics({ processMetrics: false }),
    config: {
      bodyLimit: options.bodyLimit ?? '64mb',
      bodyLimitBytes: options.bodyLimitBytes ?? 64 * 1024 * 1024,
    },
    readiness,
  });
  return { app, logs, calls, readiness };
}

describe('hook server', () => {
  describe('probes', () => {
    it('GET /healthz answers 200 {status: ok}', async () => {
      const { app } = harness();
      const res = await request(app).get('/healthz').expect(200);
      expect(res.body).to.deep.equal({ status: 'ok' });
    });

    it('GET /readyz follows the readiness flag', async () => {
      const { app, readiness } = harness();
      await request(app).get('/readyz').expect(200, { status: 'ready' });
      readiness.markNotReady('shutting down (SIGTERM)');
      const res = await request(app).get('/readyz').expect(503);
      expect(res.body).to.deep.equal({ status: 'not ready', reason: 'shutting down (SIGTERM)' });
    });

    it('answers 404 as JSON for an unknown route', async () => {
      const { app } = harness();
      const res = await request(app).get('/nope').expect(404).expect('Content-Type', /json/);
      expect(res.body.error).to.equal('no route for GET /nope');
    });
  });

  describe('POST /hooks/:controller/:hook', () => {
    it('passes a well-formed sync request to the handler and returns its answer', async () => {
      const { app, calls } = harness();
      const res = await request(app)
        .post('/hooks/virtualcluster/sync')
        .send(syncBody())
        .expect(200)
        .expect('Content-Type', /application\/json/);
      expect(res.body).to.deep.equal({
        status: { phase: 'Pending', childTypes: ['Secret.v1', 'Cluster.k3k.io/v1beta1'] },
        children: [{ apiVersion: 'v1', kind: 'Service', metadata: { name: 'vc1-api' } }],
      });
      expect(calls).to.have.length(1);
      expect(calls[0]?.parent.metadata.uid).to.equal('1f0c3c1e-uid');
      expect(calls[0]?.children['Secret.v1']?.['tenant-a/vc1-admin-kubeconfig']).to.deep.equal(
        secretChild,
      );
      expect(calls[0]?.finalizing).to.equal(false);
    });

    it('fills absent or null children, related and finalizing', async () => {
      const { app, calls } = harness();
      await request(app)
        .post('/hooks/virtualcluster/sync')
        .send({ parent, children: null })
        .expect(200);
      expect(calls[0]?.children).to.deep.equal({});
      expect(calls[0]?.related).to.deep.equal({});
      expect(calls[0]?.finalizing).to.equal(false);
    });

    it('awaits an async finalize handler', async () => {
      const { app } = harness();
      const res = await request(app)
        .post('/hooks/virtualcluster/finalize')
        .send(syncBody({ finalizing: true }))
        .expect(200);
      expect(res.body).to.deep.equal({ status: null, children: [], finalized: true });
    });

    it('serves DecoratorController hooks with the body Metacontroller posts (object, attachments)', async () => {
      const { app } = harness();
      const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tenant-a' } };
      const res = await request(app)
        .post('/hooks/host-namespace/sync')
        .send({
          controller: { apiVersion: 'metacontroller.k8s.io/v1alpha1', kind: 'DecoratorController' },
          object: namespace,
          attachments: { 'NetworkPolicy.networking.k8s.io/v1': {} },
          related: {},
          finalizing: false,
        })
        .expect(200);
      expect(res.body.labels).to.deep.equal({ 'pod-security.kubernetes.io/enforce': 'baseline' });
      expect(res.body.status).to.deep.equal({ children: 1 });
    });

    it('refuses a DecoratorController body in the composite shape and names the fields', async () => {
      const { app } = harness();
      const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tenant-a' } };
      const res = await request(app)
        .post('/hooks/host-namespace/sync')
        .send({ parent: namespace, children: {} })
        .expect(400);
      expect(res.body.error).to.include('request.object: required (the body has "parent"');
      expect(res.body.error).to.include('request.attachments: required (the body has "children"');
    });
  });

  describe('bad requests', () => {
    it('answers 400 naming the problem for malformed JSON, without echoing the body', async () => {
      const { app, logs } = harness();
      const bodies = [`not json ${SECRET}`, `{"parent": oops ${SECRET}`];
      for (const body of bodies) {
        const res = await request(app)
          .post('/hooks/virtualcluster/sync')
          .set('Content-Type', 'application/json')
          .send(body)
          .expect(400)
          .expect('Content-Type', /json/);
        expect(res.body.error).to.match(
          /^request body is not valid JSON: Unexpected token '[no]'$/,
        );
      }
      await logs.waitForLines(bodies.length);
      expect(logs.lines.join('\n')).not.to.include(SECRET.slice(0, 6));
    });

    it('answers 400 for a truncated JSON body', async () => {
      const { app } = harness();
      const res = await request(app)
        .post('/hooks/virtualcluster/sync')
        .set('Content-Type', 'application/json')
        .send('{"parent": {"kind": ')
        .expect(400);
      expect(res.body.error).to.equal(
        'request body is not valid JSON: Unexpected end of JSON input',
      );
    });

    it('answers 400 naming `parent` when it is missing', async () => {
      const { app, calls } = harness();
      const res = await request(app)
        .post('/hooks/virtualcluster/sync')
        .send(syncBody({ parent: undefined }))
        .expect(400);
      expect(res.body.error).to.equal('invalid sync request: request.parent: required');
      expect(calls).to.have.length(0);
    });

    it('answers 400 naming the parent field that is wrong', async () => {
      const { app } = harness();
      const res = await request(app)
        .post('/hooks/virtualcluster/sync')
        .send(syncBody({ parent: { ...parent, metadata: { namespace: 'tenant-a' } } }))
        .expect(400);
      expect(res.body.error).to.equal(
        'invalid sync request: request.parent.metadata.name: required',
      );
    });

    it('answers 400 naming the child type whose shape is wrong', async () => {
      const { app } = harness();
      const res = await request(app)
        .post('/hooks/virtualcluster/sync')
        .send(syncBody({ children: { 'Service.v1': ['not', 'a', 'map'] } }))
        .expect(400);
      expect(res.body.error).to.equal(
        'invalid sync request: request.children["Service.v1"]: must be an object, got array',
      );
    });

    it('answers 400 when children use v1 keys (name instead of namespace/name)', async () => {
      const { app } = harness();
      const res = await request(app)
        .post('/hooks/virtualcluster/sync')
        .send(syncBody({ children: { 'Secret.v1': { 'vc1-admin-kubeconfig': secretChild } } }))
        .expect(400);
      expect(res.body.error).to.include(
        'request.children["Secret.v1"]["vc1-admin-kubeconfig"]: key must be the object\'s namespace/name "tenant-a/vc1-admin-kubeconfig"',
      );
    });

    it('answers 400 for a JSON array body', async () => {
      const { app } = harness();
      const res = await request(app).post('/hooks/cell/sync').send([parent]).expect(400);
      expect(res.body.error).to.equal(
        'invalid sync request: request: must be a JSON object, got array',
      );
    });

    it('answers 415 for a body that is not JSON', async () => {
      const { app } = harness();
      const res = await request(app)
        .post('/hooks/cell/sync')
        .set('Content-Type', 'text/plain')
        .send('parent=x')
        .expect(415);
      expect(res.body.error).to.equal(
        'request body must be JSON (Content-Type: application/json), got text/plain',
      );
    });

    it('answers 413 naming the limit and the variable for a body over the limit', async () => {
      const { app, calls } = harness({ bodyLimit: '1kb', bodyLimitBytes: 1024 });
      const big = syncBody({
        related: { 'ConfigMap.v1': { 'tenant-a/big': { data: 'x'.repeat(2048) } } },
      });
      const res = await request(app).post('/hooks/virtualcluster/sync').send(big).expect(413);
      expect(res.body.error).to.match(/exceeds the limit of 1kb \(1024 bytes\)/);
      expect(res.body.error).to.include('KUBECELL_BODY_LIMIT');
      expect(calls).to.have.length(0);
    });

    it('answers 405 for a GET on a hook', async () => {
      const { app } = harness();
      const res = await request(app).get('/hooks/cell/sync').expect(405).expect('Allow', 'POST');
      expect(res.body.error).to.equal('hooks accept POST only, got GET');
    });
  });

  describe('routing', () => {
    it('answers 404 naming an unknown controller', async () => {
      const { app } = harness();
      const res = await request(app).post('/hooks/cats/sync').send(syncBody()).expect(404);
      expect(res.body.error).to.equal(
        'unknown controller "cats"; controllers are virtualcluster, cell, host-namespace',
      );
    });

    it('answers 404 naming an unknown hook', async () => {
      const { app } = harness();
      const res = await request(app).post('/hooks/cell/resync').send(syncBody()).expect(404);
      expect(res.body.error).to.equal('unknown hook "resync"; hooks are customize, sync, finalize');
    });

    it('answers 404 for a hook the controller does not declare', async () => {
      const { app } = harness();
      const res = await request(app).post('/hooks/cell/finalize').send(syncBody()).expect(404);
      expect(res.body.error).to.equal('controller "cell" has no finalize hook');
    });
  });

  describe('handler failures', () => {
    it('answers 500 with the message when a handler throws, then serves the next call', async () => {
      const { app } = harness();
      const boom = validCell({ name: 'boom', namespace: 'kubecell-system' });
      const res = await request(app).post('/hooks/cell/sync').send({ parent: boom }).expect(500);
      expect(res.body).to.deep.equal({ error: 'cell boom: inventory missing' });
      await request(app).post('/hooks/cell/sync').send(syncBody()).expect(200);
      await request(app).get('/healthz').expect(200);
    });

    it('answers 400 for nesting no Kubernetes object has, without calling the handler', async () => {
      const { app, logs, calls } = harness();
      const deep = `{"parent":${JSON.stringify(validCell({ name: 'boom' })).replace(
        '"spec":{',
        `"spec":{"deep":${'['.repeat(5000)}${']'.repeat(5000)},`,
      )}}`;
      const tooDeep = await request(app)
        .post('/hooks/virtualcluster/sync')
        .set('content-type', 'application/json')
        .send(deep)
        .expect(400);
      expect(tooDeep.body.error).to.equal(
        'invalid sync request: request body nests deeper than 200 levels; no Kubernetes object does',
      );
      expect(calls).to.have.length(0);
      await logs.waitForLines(1);
      expect(logs.entries().map((entry) => entry.level)).to.deep.equal(['warn']);
    });

    it('answers 400 when the answer cannot be serialised because it carries such a body', async () => {
      const logs = captureLogger();
      const registry = new HookRegistry().registerComposite('cell', {
        // Echoes a part of the request, as a hook that carries its previous status forward does.
        sync: (req) => ({ status: req.parent as unknown as Record<string, unknown>, children: [] }),
      });
      const app = createApp({
        registry,
        logger: logs.logger,
        metrics: createMetrics({ processMetrics: false }),
        config: { bodyLimit: '64mb', bodyLimitBytes: 64 * 1024 * 1024 },
      });
      const deep = JSON.stringify(validCell({ name: 'echo' })).replace(
        '"spec":{',
        `"status":{"deep":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}},"spec":{`,
      );
      const res = await request(app)
        .post('/hooks/cell/sync')
        .set('content-type', 'application/json')
        .send(`{"parent":${deep}}`)
        .expect(400);
      expect(res.body.error).to.include('nests deeper than 200 levels');
    });

    it('answers 500 with the message when an async handler rejects', async () => {
      const { app } = harness();
      const res = await request(app)
        .post('/hooks/cell/sync')
        .send({ parent: { ...parent, metadata: { name: 'async-boom' } } })
        .expect(500);
      expect(res.body).to.deep.equal({ error: 'async boom' });
    });

    it('answers 500 instead of sending a field Metacontroller would reject', async () => {
      const { app } = harness();
      const res = await request(app)
        .post('/hooks/cell/sync')
        .send({ parent: { ...parent, metadata: { name: 'extra-field' } } })
        .expect(500);
      expect(res.body.error).to.equal(
        'the cell sync hook returned an invalid response: response["labels"]: unknown field ' +
          '(Metacontroller v2 accepts only status, children, resyncAfterSeconds, finalized)',
      );
    });

    it('answers 500 instead of a response without children (which would delete them all)', async () => {
      const { app } = harness();
      const res = await request(app)
        .post('/hooks/cell/sync')
        .send({ parent: { ...parent, metadata: { name: 'no-children' } } })
        .expect(500);
      expect(res.body.error).to.include('response.children: required');
    });
  });

  describe('logs', () => {
    it('writes one JSON line per hook call with the parent identity, duration and outcome', async () => {
      const { app, logs } = harness();
      await request(app).post('/hooks/virtualcluster/sync').send(syncBody()).expect(200);
      await logs.waitForLines(1);
      // Give a stray second line the chance to appear before counting.
      await new Promise((resolve) => setTimeout(resolve, 20));
      const entries = logs.entries();
      expect(entries).to.have.length(1);
      const entry = entries[0] as Record<string, unknown>;
      expect(entry).to.include({
        level: 'info',
        msg: 'hook call',
        controller: 'virtualcluster',
        hook: 'sync',
        status: 200,
        outcome: 'ok',
      });
      expect(entry.parent).to.deep.equal({
        kind: 'VirtualCluster',
        namespace: 'tenant-a',
        name: 'vc1',
        uid: '1f0c3c1e-uid',
      });
      expect(entry.durationMs).to.be.a('number').and.at.least(0);
      expect(entry.timestamp).to.be.a('string');
      expect(Number.isNaN(Date.parse(entry.timestamp as string))).to.equal(false);
    });

    it('never logs the body, children or Secret data', async () => {
      const { app, logs } = harness();
      await request(app).post('/hooks/virtualcluster/sync').send(syncBody()).expect(200);
      await request(app)
        .post('/hooks/virtualcluster/sync')
        .send(syncBody({ children: { 'Service.v1': [SECRET] } }))
        .expect(400);
      await logs.waitForLines(2);
      const text = logs.lines.join('\n');
      expect(text).not.to.include(SECRET);
      expect(text).not.to.include('kubeconfig.yaml');
      expect(text).not.to.include('cellRef');
    });

    it('logs a client error at warn and a handler exception at error with its stack', async () => {
      const { app, logs } = harness();
      await request(app).post('/hooks/plan/sync').send(syncBody()).expect(404);
      // (plan is not registered in this harness.)
      await request(app)
        .post('/hooks/cell/sync')
        .send({ parent: validCell({ name: 'boom', uid: 'u-9' }) })
        .expect(500);
      await logs.waitForLines(2);
      const [notFound, boom] = logs.entries();
      expect(notFound).to.include({
        level: 'warn',
        controller: 'plan',
        status: 404,
        outcome: 'client_error',
        error: 'unknown controller "plan"; controllers are virtualcluster, cell, host-namespace',
      });
      expect(boom).to.include({
        level: 'error',
        controller: 'cell',
        status: 500,
        outcome: 'error',
        error: 'cell boom: inventory missing',
      });
      expect(boom?.parent).to.deep.equal({ kind: 'Cell', name: 'boom', uid: 'u-9' });
      expect(boom?.stack).to.be.a('string').and.include('cell boom');
    });
  });

  describe('GET /metrics', () => {
    it('counts requests, errors and latency per hook', async () => {
      const { app } = harness();
      await request(app).post('/hooks/virtualcluster/sync').send(syncBody()).expect(200);
      await request(app).post('/hooks/virtualcluster/sync').send(syncBody()).expect(200);
      await request(app).post('/hooks/virtualcluster/sync').send({}).expect(400);
      await request(app).post('/hooks/not-a-controller/sync').send({}).expect(404);

      const res = await request(app)
        .get('/metrics')
        .expect(200)
        .expect('Content-Type', /text\/plain/);
      const text = res.text;
      expect(text).to.include(
        'kubecell_hook_requests_total{controller="virtualcluster",hook="sync",code="200"} 2',
      );
      expect(text).to.include(
        'kubecell_hook_requests_total{controller="virtualcluster",hook="sync",code="400"} 1',
      );
      expect(text).to.include(
        'kubecell_hook_errors_total{controller="virtualcluster",hook="sync"} 1',
      );
      expect(text).to.include('kubecell_hook_errors_total{controller="cell",hook="sync"} 0');
      expect(text).to.include(
        'kubecell_hook_duration_seconds_count{controller="virtualcluster",hook="sync"} 3',
      );
      // supertest announces each body's length: two sync bodies and `{}`.
      const bytes = 2 * Buffer.byteLength(JSON.stringify(syncBody())) + 2;
      expect(text).to.include(
        'kubecell_hook_request_bytes_count{controller="virtualcluster",hook="sync"} 3',
      );
      expect(text).to.include(
        `kubecell_hook_request_bytes_sum{controller="virtualcluster",hook="sync"} ${bytes}`,
      );
      // A made-up controller name does not create its own series.
      expect(text).to.include(
        'kubecell_hook_requests_total{controller="unknown",hook="sync",code="404"} 1',
      );
      expect(text).not.to.include('not-a-controller');
    });

    it('includes process metrics when asked to', async () => {
      const metrics = createMetrics();
      const text = await metrics.registry.metrics();
      expect(text).to.include('process_cpu_seconds_total');
      expect(text).to.include('nodejs_heap_size_used_bytes');
    });
  });
});
