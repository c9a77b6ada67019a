/**
 * The cell agent's loop: a pass every KUBECELL_AGENT_INTERVAL_SECONDS until stopped, one
 * structured log line per pass (what each report, the published signing key and each sealed
 * kubeconfig became, the errors, how long it took). Passes never overlap: the next starts an
 * interval after the last one ended.
 */
import type { Logger } from '../server/logger.js';
import type { AgentConfig } from './config.js';
import type { AgentApi } from './kube-api.js';
import { runPass, type PassSummary } from './pass.js';

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
}

/** Counts of each outcome: `{unchanged: 2, updated: 1}`. */
function tally(outcomes: Record<string, string>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const outcome of Object.values(outcomes)) counts[outcome] = (counts[outcome] ?? 0) + 1;
  return counts;
}

export function logPass(logger: Logger, summary: PassSummary, durationMs: number): void {
  const failed = summary.errors.length > 0;
  logger.log(failed ? 'warn' : 'info', 'cell agent pass', {
    reports: summary.reports,
    identity: summary.identity,
    sealed: tally(summary.sealed),
    ...(failed
      ? { errorCount: summary.errors.length, errors: summary.errors.slice(0, ERRORS_LOGGED) }
      : {}),
    durationMs,
  });
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Runs passes until `signal` aborts; returns the last pass's summary. */
export async function runAgentLoop(deps: LoopDeps): Promise<PassSummary | undefined> {
  const clock = deps.clock ?? (() => new Date());
  let last: PassSummary | undefined;
  while (!deps.signal.aborted) {
    const started = clock();
    try {
      last = await runPass({ api: deps.api, config: deps.config, now: started });
    } catch (error) {
      // A bug must not stop the agent: the hub would only see its report grow old.
      last = {
        reports: {},
        identity: 'failed',
        sealed: {},
        errors: [`pass failed: ${String(error)}`],
      };
    }
    logPass(deps.logger, last, clock().getTime() - started.getTime());
    if (deps.once) break;
    await wait(deps.config.intervalSeconds * 1000, deps.signal);
  }
  return last;
}
