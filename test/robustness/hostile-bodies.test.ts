// Malformed and hostile bodies to every endpoint: every registered /hooks/<controller>/<hook>
// route and the admission webhook's /admission/validate and /admission/mutate. Each must answer a
// 4xx (hooks, or a body that is not an AdmissionReview), a well-formed 200, or for a review a
// well-formed AdmissionReview whose denial is not an internal error; never a 500, never a
// dropped connection. After each test the servers still answer /healthz and
// Object.prototype is untouched.
import { expect } from 'chai';
import fc from 'fast-check';
import { createAdmissionApp } from '../../hooks/admission/app.js';
import { fakeLookup } from '../../hooks/admission/testing.js';
import { checkResponse } from '../../hooks/metacontroller/response-shape.js';
import { createApp } from '../../hooks/server/app.js';
import { createMetrics } from '../../hooks/server/metrics.js';
import { captureLogger } from '../../hooks/server/testing.js';
import { admissionBodies, hookBody, VC_NOW } from './bodies.js';
import { deepNesting, encode, mutate, mutations, rawBodies } from './hostile.js';
import {
  postJson,
  productRegistry,
  prototypeSnapshot,
  rawRequest,
  serve,
  type RawResponse,
  type Served,
} from './support.js';

/** Runs per property; the whole file stays within a few seconds on a busy 2-core machine. */
const RUNS = Number(process.env['KUBECELL_ROBUSTNESS_RUNS'] ?? 150);

interface Route {
  path: string;
  controller: string;
  hook: string;
  base: unknown;
  /** The base body is known to be answered 200. */
  accepted: boolean;
  responseKind: Parameters<typeof checkResponse>[0];
}

function describeAnswer(res: RawResponse): string {
  return `${res.status} ${res.text.slice(0, 500)}`;
}

/**
 * A hook's answer: 4xx with a JSON error, or 200 with a response Metacontroller accepts. 429
 * (with Retry-After) is a VirtualCluster copy that looks stale: children just created, no
 * snapshot (hooks/metacontroller/retry-later.ts).
 */
function expectHookAnswer(route: Route, res: RawResponse, what: string): void {
  expect(res.status, `${route.path} ${what}: ${describeAnswer(res)}`).to.be.oneOf([
    200, 400, 404, 405, 413, 415, 429,
  ]);
  if (res.status === 429)
    expect(res.headers['retry-after'], `${route.path} ${what}`).to.match(/^\d+$/);
  const body = JSON.parse(res.text) as Record<string, unknown>;
  if (res.status === 200) {
    expect(checkResponse(route.responseKind, body), `${route.path} ${what}`).to.deep.equal([]);
  } else {
    expect(body.error, `${route.path} ${what}`).to.be.a('string');
  }
}

/** An admission answer: 4xx with a JSON error, or an AdmissionReview that is no internal error. */
function expectAdmissionAnswer(path: string, res: RawResponse, what: string): void {
  expect(res.status, `${path} ${what}: ${describeAnswer(res)}`).to.be.oneOf([
    200, 400, 404, 405, 413, 415,
  ]);
  const body = JSON.parse(res.text) as {
    error?: unknown;
    apiVersion?: string;
    response?: { uid?: unknown; allowed?: unknown; status?: { code?: number; message?: string } };
  };
  if (res.status !== 200) {
    expect(body.error, `${path} ${what}`).to.be.a('string');
    return;
  }
  expect(body.apiVersion).to.equal('admission.k8s.io/v1');
  expect(body.response?.uid, `${path} ${what}`).to.be.a('string');
  expect(body.response?.allowed, `${path} ${what}`).to.be.a('boolean');
  const code = body.response?.status?.code ?? 0;
  expect(code, `${path} ${what}: internal error ${body.response?.status?.message}`).to.be.below(
    500,
  );
}

describe('robustness: hostile bodies to every endpoint', function () {
  this.timeout(120_000);
  let hooks: Served;
  let admission: Served;
  let routes: Route[];
  const prototypes = prototypeSnapshot();

  before(async () => {
    const registry = productRegistry(() => VC_NOW);
    routes = registry.registered().flatMap(({ controller, hooks: names }) =>
      names.map((hook) => {
        const lookup = registry.lookup(controller, hook);
        if (!lookup.found) throw new Error(lookup.message);
        const { body, accepted } = hookBody(controller, hook);
        return {
          path: `/hooks/${controller}/${hook}`,
          controller,
          hook,
          base: body,
          accepted,
          responseKind: lookup.hook.responseKind,
        };
      }),
    );
    hooks = await serve(
      createApp({
        registry,
        logger: captureLogger().logger,
        metrics: createMetrics({ processMetrics: false }),
        config: { bodyLimit: '64mb', bodyLimitBytes: 64 * 1024 * 1024 },
      }),
    );
    admission = await serve(
      createAdmissionApp({ lookup: fakeLookup(), logger: captureLogger().logger }),
    );
  });

  after(async () => {
    await hooks?.close();
    await admission?.close();
  });

  afterEach('the servers keep serving and no prototype was polluted', async () => {
    for (const served of [hooks, admission]) {
      const health = await rawRequest(`${served.base}/healthz`, { method: 'GET' });
      expect(health.status).to.equal(200);
    }
    expect(prototypeSnapshot()).to.equal(prototypes);
    expect(({} as Record<string, unknown>)['polluted']).to.equal(undefined);
  });

  it('covers every registered controller hook', () => {
    expect(routes.map((route) => route.path)).to.include.members([
      '/hooks/cell/sync',
      '/hooks/plan/sync',
      '/hooks/virtualcluster/sync',
    ]);
    // Each well-formed base body is answered 200: the mutations start from a working request.
    return Promise.all(
      routes.map(async (route) => {
        const res = await postJson(`${hooks.base}${route.path}`, encode(route.base));
        if (route.accepted) {
          expect(res.status, `${route.path}: ${describeAnswer(res)}`).to.equal(200);
        } else {
          expectHookAnswer(route, res, 'plain body');
        }
      }),
    );
  });

  it('hooks: a valid body broken in 1 to 4 places never gets a 500', async function () {
    // 300 calls, some with multi-MB Cell bodies: seconds alone, minutes on a CI machine busy
    // with the cluster tests. The property is the answer, never the time.
    this.timeout(300_000);
    await fc.assert(
      fc.asyncProperty(fc.nat(), mutations, async (which, list) => {
        const route = routes[which % routes.length] as Route;
        const res = await postJson(`${hooks.base}${route.path}`, encode(mutate(route.base, list)));
        expectHookAnswer(route, res, 'mutated body');
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('hooks: any JSON value never gets a 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat(), fc.jsonValue({ maxDepth: 6 }), async (which, value) => {
        const route = routes[which % routes.length] as Route;
        const res = await postJson(`${hooks.base}${route.path}`, JSON.stringify(value));
        expectHookAnswer(route, res, 'random JSON');
      }),
      { numRuns: RUNS },
    );
  });

  it('hooks: bytes that are not a JSON object, wrong methods, types and encodings get a 4xx', async () => {
    for (const route of routes) {
      const url = `${hooks.base}${route.path}`;
      for (const { name, body } of rawBodies(encode(route.base))) {
        expectHookAnswer(route, await postJson(url, body), name);
      }
      for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
        const res = await rawRequest(url, { method });
        expect(res.status, `${method} ${route.path}`).to.equal(405);
      }
      const oddRequests: Array<{ name: string; headers: Record<string, string> }> = [
        { name: 'text/plain', headers: { 'content-type': 'text/plain' } },
        { name: 'no content type', headers: {} },
        { name: 'latin1 charset', headers: { 'content-type': 'application/json; charset=latin1' } },
        {
          name: 'gzip that is not gzip',
          headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        },
        {
          name: 'deflate that is not deflate',
          headers: { 'content-type': 'application/json', 'content-encoding': 'deflate' },
        },
        {
          name: 'br that is not br',
          headers: { 'content-type': 'application/json', 'content-encoding': 'br' },
        },
        {
          name: 'unknown encoding',
          headers: { 'content-type': 'application/json', 'content-encoding': 'compress' },
        },
      ];
      for (const { name, headers } of oddRequests) {
        const res = await rawRequest(url, { body: encode(route.base), headers });
        expectHookAnswer(route, res, name);
        expect(res.status, `${route.path} ${name}`).to.be.within(400, 499);
      }
    }
  });

  it('a list far past its maxItems, or a map in its place, is refused at once, not checked item against item', async function () {
    // The Cell's devices rule compares every device with every other; over 3,000 devices that
    // took minutes before the schema's size bounds stopped the rules (validate-object.ts).
    this.timeout(60_000);
    const route = routes.find((r) => r.path === '/hooks/cell/sync') as Route;
    const body = structuredClone(route.base) as {
      parent: { spec: { machineProfile: Record<string, unknown> } };
    };
    body.parent.spec.machineProfile.devices = Array.from({ length: 3000 }, (_, i) => ({
      name: `gpu-${i}`,
      resourceName: `example.com/gpu-${i}`,
    }));
    const started = Date.now();
    const hook = await postJson(`${hooks.base}${route.path}`, JSON.stringify(body));
    expect(hook.status, hook.text.slice(0, 300)).to.equal(400);
    expect(hook.text).to.include('must NOT have more than 16 items');
    const review = admissionBodies().find(
      (r) => (r.request as { kind: { kind: string } }).kind.kind === 'Cell',
    ) as Record<string, { object: typeof body.parent }>;
    const cellReview = structuredClone(review);
    cellReview.request!.object.spec.machineProfile.devices =
      body.parent.spec.machineProfile.devices;
    const denied = await postJson(
      `${admission.base}/admission/validate`,
      JSON.stringify(cellReview),
    );
    expectAdmissionAnswer('/admission/validate', denied, '3,000 devices');
    expect(denied.text).to.include('must NOT have more than 16 items');
    // The same rule over a map of 10,000 keys where the list should be.
    body.parent.spec.machineProfile.devices = Object.fromEntries(
      Array.from({ length: 10_000 }, (_, i) => [`d${i}`, { resourceName: `example.com/gpu-${i}` }]),
    );
    const map = await postJson(`${hooks.base}${route.path}`, JSON.stringify(body));
    expect(map.status, map.text.slice(0, 300)).to.equal(400);
    expect(map.text).to.include('must be of type array');
    expect(Date.now() - started, 'milliseconds for all three').to.be.below(10_000);
  });

  it('admission: a valid review broken in 1 to 4 places gets a 4xx or a review, never a 500', async () => {
    const reviews = admissionBodies();
    await fc.assert(
      fc.asyncProperty(
        fc.nat(),
        fc.constantFrom('validate', 'mutate'),
        mutations,
        async (which, webhook, list) => {
          const base = reviews[which % reviews.length];
          const path = `/admission/${webhook}`;
          const res = await postJson(`${admission.base}${path}`, encode(mutate(base, list)));
          expectAdmissionAnswer(path, res, 'mutated review');
        },
      ),
      { numRuns: RUNS * 2 },
    );
  });

  it('admission: any JSON value, raw bytes and odd requests get a 4xx or a review', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('validate', 'mutate'),
        fc.jsonValue({ maxDepth: 6 }),
        async (webhook, value) => {
          const path = `/admission/${webhook}`;
          const res = await postJson(`${admission.base}${path}`, JSON.stringify(value));
          expectAdmissionAnswer(path, res, 'random JSON');
        },
      ),
      { numRuns: RUNS },
    );
    const valid = encode(admissionBodies()[0]);
    // An object nested 20,000 levels deep overflows the validators' recursion: a denial, not a 500.
    const deep = valid.replace('"spec":{', `"spec":{"deep":${deepNesting(20_000, false).text},`);
    expect(deep).to.not.equal(valid);
    const deepAnswer = await postJson(`${admission.base}/admission/validate`, deep);
    expectAdmissionAnswer('/admission/validate', deepAnswer, 'deep object');
    expect(JSON.parse(deepAnswer.text).response).to.deep.include({ allowed: false });
    for (const webhook of ['validate', 'mutate']) {
      const path = `/admission/${webhook}`;
      for (const { name, body } of rawBodies(valid)) {
        expectAdmissionAnswer(path, await postJson(`${admission.base}${path}`, body), name);
      }
      const oversized = await postJson(
        `${admission.base}${path}`,
        `{"pad":"${'x'.repeat(9 * 1024 * 1024)}"}`,
      );
      expect(oversized.status, `${path} oversized`).to.equal(413);
      expect((await rawRequest(`${admission.base}${path}`, { method: 'GET' })).status).to.equal(
        405,
      );
      // Bodies are never inflated (hooks/server/body-gate.ts), gzip or not.
      const gzip = await rawRequest(`${admission.base}${path}`, {
        body: valid,
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      });
      expectAdmissionAnswer(path, gzip, 'gzip that is not gzip');
      expect(gzip.status, `${path} gzip that is not gzip`).to.equal(415);
      const plain = await rawRequest(`${admission.base}${path}`, {
        body: valid,
        headers: { 'content-type': 'text/plain' },
      });
      expect(plain.status, `${path} text/plain`).to.be.within(400, 499);
    }
  });
});
