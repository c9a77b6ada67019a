/**
 * Admission metrics, registered on the hook server's registry (so `GET /metrics` on the HTTP
 * port shows them beside the hook metrics). Label values are bounded: a kind or operation the
 * webhook does not know is counted as `unknown`.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { KIND_NAMES, isKindName } from '../api/kinds.js';

export type AdmissionWebhook = 'validate' | 'mutate';
/** allowed, denied (a rule or a malformed review), error (a lookup or the webhook failed), bad_request (400/413/415). */
export type AdmissionResult = 'allowed' | 'denied' | 'error' | 'bad_request';

const OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

export interface AdmissionSample {
  webhook: AdmissionWebhook;
  kind?: string;
  operation?: string;
  result: AdmissionResult;
  durationSeconds: number;
}

export interface AdmissionMetrics {
  observe(sample: AdmissionSample): void;
}

export function createAdmissionMetrics(registry: Registry): AdmissionMetrics {
  const reviews = new Counter({
    name: 'kubecell_admission_reviews_total',
    help: 'AdmissionReviews answered, by webhook (validate, mutate), kind, operation and result (allowed, denied, error, bad_request).',
    labelNames: ['webhook', 'kind', 'operation', 'result'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'kubecell_admission_review_duration_seconds',
    help: 'Time to answer an AdmissionReview, lookups included (the webhook timeout is 10 s).',
    labelNames: ['webhook'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  // Start the failure series at 0 so that rate() and increase() see the first one.
  for (const webhook of ['validate', 'mutate']) {
    for (const kind of KIND_NAMES) {
      reviews.labels({ webhook, kind, operation: 'CREATE', result: 'error' }).inc(0);
    }
  }
  return {
    observe({ webhook, kind, operation, result, durationSeconds }) {
      reviews
        .labels({
          webhook,
          kind: isKindName(kind) ? kind : 'unknown',
          operation:
            operation !== undefined && OPERATIONS.includes(operation) ? operation : 'unknown',
          result,
        })
        .inc();
      duration.labels({ webhook }).observe(durationSeconds);
    },
  };
}
