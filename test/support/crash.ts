import type { EngineContext } from '../../workers/engine/engine.ts';
import type { CrashPoint } from '../../workers/store/crashPoints.ts';

/**
 * What terminating the worker does to its engine, in one process: uncommitted writes are lost and nothing
 * more is stored, its locks are let go, and what it kept in memory is forgotten (a new engine starts from
 * IndexedDB).
 */
export async function terminateWorker(ctx: EngineContext): Promise<void> {
  await ctx.store.repoFs.abandonAll();
  ctx.store.locks.dropAll();
}

/**
 * Starts `operation` and stops it dead at `point`: the operation never goes on from there (no cleanup, no
 * catch runs), then the engine's worker is "terminated". Fails if the operation ends without reaching the
 * point.
 */
export async function crashAt(
  ctx: EngineContext,
  point: CrashPoint,
  operation: () => Promise<unknown>,
): Promise<void> {
  const reached = pauseAt(ctx, point);
  const running = operation();
  running.catch(() => undefined);
  await Promise.race([
    reached.paused,
    running.then(
      () => Promise.reject(new Error(`the operation ended without reaching ${point}`)),
      (err) => Promise.reject(new Error(`the operation failed before ${point}: ${err}`)),
    ),
  ]);
  ctx.store.crash.setHook(undefined);
  await terminateWorker(ctx);
}

/** Holds the next operation that reaches `point` there until `resume()` (for an operation still alive). */
export function pauseAt(
  ctx: EngineContext,
  point: CrashPoint,
): { paused: Promise<void>; resume: () => void } {
  let paused!: () => void;
  let resume!: () => void;
  const reached = new Promise<void>((r) => {
    paused = r;
  });
  const released = new Promise<void>((r) => {
    resume = r;
  });
  ctx.store.crash.setHook((p) => {
    if (p !== point) return;
    paused();
    return released;
  });
  return {
    paused: reached,
    resume: () => {
      ctx.store.crash.setHook(undefined);
      resume();
    },
  };
}
