import { createEngine, type EngineContext, engineContext } from '../../workers/engine/engine.ts';
import type { Engine, EngineOptions, RetryPolicy } from '../../workers/engine/types.ts';

/**
 * Retry waits of a few milliseconds, for files whose tests reach an unreachable server or a failing relay
 * and check what the error says, not how long the client waited: the default backoff (0.5, 1, 2 s) made
 * each such test wait 3.5 s.
 */
export const SHORT_RETRY: Partial<RetryPolicy> = { baseDelayMs: 20, maxDelayMs: 200 };

/**
 * How long after a call a test's engine counts as quiet (the app waits FOREGROUND_QUIET_MS, 500 ms): the
 * clone's commit-graph steps wait for quiet, and every test that waits for them (maintenanceIdle) idled
 * that long each time. The steps then run between a test's calls as they run between a person's, and still
 * give way to a call in flight and stop at their safe points as in the app; only the idle wait is shorter.
 * workers/ops/maintenance/foregroundActivity.test.ts checks the wait itself.
 */
export const TEST_FOREGROUND_QUIET_MS = 20;

/**
 * An engine as the app's worker makes it (IndexedDB, here fake-indexeddb; the default namespace), and its
 * context, through which a test looks at what it stores and keeps; quiet TEST_FOREGROUND_QUIET_MS after a call.
 */
export function testEngine(options: EngineOptions = {}): { engine: Engine; ctx: EngineContext } {
  const engine = createEngine(options);
  const ctx = engineContext(engine);
  ctx.maintenance.foreground.quietMs = TEST_FOREGROUND_QUIET_MS;
  return { engine, ctx };
}
