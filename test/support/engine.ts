import { createEngine, type EngineContext, engineContext } from '../../workers/engine/engine.ts';
import type { Engine, EngineOptions } from '../../workers/engine/types.ts';

/**
 * An engine as the app's worker makes it (IndexedDB, here fake-indexeddb; the default namespace), and its
 * context, through which a test looks at what it stores and keeps.
 */
export function testEngine(options: EngineOptions = {}): { engine: Engine; ctx: EngineContext } {
  const engine = createEngine(options);
  return { engine, ctx: engineContext(engine) };
}
