// Echoed input is bounded (issue 15, finding 5): a 5 MB object name once produced a 5.2 MB log
// line and a 5.2 MB error answer. Every hook route and both admission webhooks get objects whose
// name is 5 MB, and whose namespace, kind, uid, a label key or an unknown field's name is 1 MB;
// every log line and every error answer (for the admission webhooks, every AdmissionReview
// answer) must stay within a few kilobytes. What bounds them is hooks/json/echo.ts.
//
// A hook's 200 answer is not an echo but the desired state Metacontroller applies (a child named
// after its parent, say): it is sized by its input, and the apiserver refuses names over 253
// characters before any hook sees them, so it is not bounded here.
import { expect } from 'chai';
import { createAdmissionApp } from '../../hooks/admission/app.js';
import { fakeLookup, type Json } from '../../hooks/admission/testing.js';
import { createApp } from '../../hooks/server/app.js';
import { createMetrics } from '../../hooks/server/metrics.js';
import { captureLogger, type CapturedLogger } from '../../hooks/server/testing.js';
import { admissionBodies, hookBody, VC_NOW } from './bodies.js';
import { postJson, productRegistry, serve, type Served } from './support.js';

const FIVE_MB = 5 * 1024 * 1024;
const ONE_MB = 1024 * 1024;
/** Bounds checked: far above any real line or answer, far below the input. */
const MAX_LOG_LINE = 16 * 1024;
const MAX_ERROR_ANSWER = 16 * 1024;
const MAX_REVIEW_ANSWER = 64 * 1024;

type Variant = [what: string, change: (object: Json) => void];

const VARIANTS: Variant[] = [
  ['a 5 MB name', (o) => (meta(o).name = 'n'.repeat(FIVE_MB))],
  ['a 1 MB namespace', (o) => (meta(o).namespace = 's'.repeat(ONE_MB))],
  ['a 1 MB kind', (o) => (o.kind = 'K'.repeat(ONE_MB))],
  ['a 1 MB uid', (o) => (meta(o).uid = 'u'.repeat(ONE_MB))],
  ['a 1 MB label key', (o) => (meta(o).labels = { ['l'.repeat(ONE_MB)]: 'x' })],
  [
    'a 1 MB unknown field',
    (o) => {
      ((o.spec ??= {}) as Json)['f'.repeat(ONE_MB)] = 1;
    },
  ],
];

function meta(object: Json): Json {
  return (object.metadata ??= {}) as Json;
}

function linesAfter(logs: CapturedLogger, before: number): string[] {
  return logs.lines.slice(before);
}

async function settled(logs: CapturedLogger, before: number): Promise<void> {
  // Every call logs one line (winston writes asynchronously).
  await logs.waitForLines(before + 1, 10_000);
}

describe('robustness: echoed input is bounded (hooks/json/echo.ts)', function () {
  this.timeout(300_000);

  describe('hook routes', () => {
    const logs = captureLogger();
    const registry = productRegistry(() => VC_NOW);
    let served: Served;

    before(async () => {
      const app = createApp({
        registry,
        logger: logs.logger,
        metrics: createMetrics({ processMetrics: false }),
        config: { bodyLimit: '64mb', bodyLimitBytes: 64 * 1024 * 1024 },
      });
      served = await serve(app);
    });
    after(() => served.close());

    for (const { controller, hooks } of productRegistry(() => VC_NOW).registered()) {
      for (const hook of hooks) {
        it(`/hooks/${controller}/${hook}`, async () => {
          const { body } = hookBody(controller, hook);
          const field = body.parent !== undefined ? 'parent' : 'object';
          for (const [what, change] of VARIANTS) {
            const changed = structuredClone(body);
            change(changed[field] as Json);
            const before = logs.lines.length;
            const res = await postJson(
              `${served.base}/hooks/${controller}/${hook}`,
              JSON.stringify(changed),
            );
            await settled(logs, before);
            for (const line of linesAfter(logs, before)) {
              expect(line.length, `${what}: log line`).to.be.below(MAX_LOG_LINE);
            }
            if (res.status !== 200) {
              expect(res.text.length, `${what}: ${res.status} answer`).to.be.below(
                MAX_ERROR_ANSWER,
              );
              expect((JSON.parse(res.text) as { error: unknown }).error).to.be.a('string');
            }
          }
        });
      }
    }
  });

  describe('admission webhooks', () => {
    const logs = captureLogger();
    let served: Served;

    before(async () => {
      served = await serve(createAdmissionApp({ lookup: fakeLookup(), logger: logs.logger }));
    });
    after(() => served.close());

    // One CREATE and one UPDATE of each kind the samples have.
    const reviews = admissionBodies().filter((review, index, all) => {
      const request = review.request as Json;
      const kind = (request.kind as Json).kind;
      return (
        request.operation !== 'DELETE' &&
        all.findIndex(
          (other) =>
            ((other.request as Json).kind as Json).kind === kind &&
            (other.request as Json).operation === request.operation,
        ) === index
      );
    });

    for (const path of ['/admission/validate', '/admission/mutate']) {
      it(path, async () => {
        let checked = 0;
        for (const review of reviews) {
          const request = review.request as Json;
          for (const [what, change] of VARIANTS) {
            const changed = structuredClone(review);
            const changedRequest = changed.request as Json;
            change(changedRequest.object as Json);
            if (changedRequest.oldObject) change(changedRequest.oldObject as Json);
            // The request's own copies of the identity, as the apiserver sends them.
            const object = changedRequest.object as Json;
            changedRequest.name = meta(object).name;
            changedRequest.namespace = meta(object).namespace;
            if (what.includes('uid')) changedRequest.uid = meta(object).uid;
            const label = `${String((request.kind as Json).kind)} ${String(request.operation)}, ${what}`;
            const before = logs.lines.length;
            const res = await postJson(`${served.base}${path}`, JSON.stringify(changed));
            await settled(logs, before);
            for (const line of linesAfter(logs, before)) {
              expect(line.length, `${label}: log line`).to.be.below(MAX_LOG_LINE);
            }
            expect(res.text.length, `${label}: ${res.status} answer`).to.be.below(
              MAX_REVIEW_ANSWER,
            );
            checked++;
          }
        }
        expect(checked).to.be.above(10);
      });
    }
  });
});
