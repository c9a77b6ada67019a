/**
 * The cell agent's loop: a pass at start, then one KUBECELL_AGENT_INTERVAL_SECONDS after the last
 * ended, and one shortly after a change it watches (watches.ts: host Namespaces, k3k's
 * kubeconfig Secrets; trigger.ts: debounced, DEBOUNCE_MS). The interval stays as the safety net
 * of a watch that is down. Passes never overlap. One structured log line per pass: why it ran,
 * what each report, the published signing key and each sealed kubeconfig became, the errors, how
 * long it took.
 */
import type { Logger } from '../server/logger.js';
import type { AgentConfig } from './config.js';
import type { AgentApi, WatchApi } from './kube-api.js';
import { runPass, type PassSummary } from './pass.js';
import { PassTrigger, type PassReason } from './trigger.js';
import { AgentWatches } from './watches.js';

/**
 * From a watched change to its pass: long enough that what arrives together (a work's host
 * Namespace, then its Role and ConfigMap a few ms later; k3k's Secret, then its Cluster's
 * status) costs one pass, short beside the seconds the hub's feedback takes.
 */
export const DEBOUNCE_MS = 300;

/** Most errors one log line lists (the count says how many there were). */
const ERRORS_LOGGED = 5;

export interface LoopDeps {
  api: AgentApi;
  config: AgentConfig;
  logger: Logger;
  clock?: () => Date;
  /** Stops the loop (between passes, or cuts the wait short). */
  signal: AbortSignal;
  /** One pass then return (`kubecell agent --once`). */
  once?: boolean;
  /** Watches that wake the loop (kube-api.ts kubeWatch); without, passes on the interval only. */
  watch?: WatchApi;
  /** From a watched change to its pass; DEBOUNCE_MS by default. */
  debounceMs?: number;
}

/** Counts of each outcome: `{unchanged: 2, updated: 1}`. */
function tally(outcomes: Record<string, string>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const outcome of Object.values(outcomes)) counts[outcome] = (counts[outcome] ?? 0) + 1;
  return counts;
}

export function logPass(
  logger: Logger,
  summary: PassSummary,
  durationMs: number,
  trigger: PassReason,
): void {
  const failed = summary.errors.length > 0;
  logger.log(failed ? 'warn' : 'info', 'cell agent pass', {
    trigger,
    reports: summary.reports,
    identity: summary.identity,
    sealed: tally(summary.sealed),
    ...(failed
      ? { errorCount: summary.errors.length, errors: summary.errors.slice(0, ERRORS_LOGGED) }
      : {}),
    durationMs,
  });
}

/** One pass; a bug must not stop the agent (the hub would only see its report grow old). */
async function safePass(deps: LoopDeps, now: Date): Promise<PassSummary> {
  try {
    return await runPass({ api: deps.api, config: deps.config, now });
  } catch (error) {
    return {
      reports: {},
      identity: 'failed',
      sealed: {},
      errors: [`pass failed: ${String(error)}`],
    };
  }
}

/** Runs passes until `signal` aborts; returns the last pass's summary. */
export async function runAgentLoop(deps: LoopDeps): Promise<PassSummary | undefined> {
  const clock = deps.clock ?? (() => new Date());
  const trigger = new PassTrigger(deps.debounceMs ?? DEBOUNCE_MS);
  const watches =
    deps.watch && !deps.once
      ? new AgentWatches({
          watch: deps.watch,
          changed: () => trigger.changed(),
          logger: deps.logger,
        })
      : undefined;
  watches?.start();
  let last: PassSummary | undefined;
  let reason: PassReason | 'stopped' = 'start';
  try {
    while (reason !== 'stopped' && !deps.signal.aborted) {
      trigger.passStarts();
      const started = clock();
      last = await safePass(deps, started);
      logPass(deps.logger, last, clock().getTime() - started.getTime(), reason);
      if (last.secrets) watches?.followSecrets(last.secrets);
      if (deps.once) break;
      reason = await trigger.next(deps.config.intervalSeconds * 1000, deps.signal);
    }
  } finally {
    watches?.stop();
    trigger.stop();
  }
  return last;
}
