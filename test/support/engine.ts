import { createEngine, type EngineContext, engineContext } from '../../workers/engine/engine.ts';
import type { Engine, EngineOptions, RetryPolicy } from '../../workers/engine/types.ts';

/**
 * Retry waits of a few milliseconds, for files whose tests reach an unreachable server or a failing relay
 * and check what the error says, not how long the client waited: the default backoff (0.5, 1, 2 s) made
 * each such test wait 3.5 s.
 */
export const SHORT_RETRY: Partial<RetryPolicy> = { baseDelayMs: 20, maxDelayMs: 200 };

/**
 * An engine as the app's worker makes it (IndexedDB, here fake-indexeddb; the default namespace), and its
 * context, through which a test looks at what it stores and keeps.
 */
export function testEngine(options: EngineOptions = {}): { engine: Engine; ctx: EngineContext } {
  const engine = createEngine(options);
  return { engine, ctx: engineContext(engine) };
}
