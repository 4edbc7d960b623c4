import { type CrashPoint, setCrashHook } from '../../workers/store/crashPoints.ts';
import { abandonOpenRepoFs } from '../../workers/store/repoFs.ts';
import { dropLocksOfTerminatedWorker } from '../../workers/store/repoLock.ts';

/**
 * What terminating the worker does, in one process: uncommitted writes are lost and nothing more is stored,
 * its locks are let go, and what it kept in memory is forgotten (a new worker starts from IndexedDB).
 */
export async function terminateWorker(): Promise<void> {
  await abandonOpenRepoFs();
  dropLocksOfTerminatedWorker();
}

/**
 * Starts `operation` and stops it dead at `point`: the operation never goes on from there (no cleanup, no
 * catch runs), then the worker is "terminated". Fails if the operation ends without reaching the point.
 */
export async function crashAt(point: CrashPoint, operation: () => Promise<unknown>): Promise<void> {
  const reached = pauseAt(point);
  const running = operation();
  running.catch(() => undefined);
  await Promise.race([
    reached.paused,
    running.then(
      () => Promise.reject(new Error(`the operation ended without reaching ${point}`)),
      (err) => Promise.reject(new Error(`the operation failed before ${point}: ${err}`)),
    ),
  ]);
  setCrashHook(undefined);
  await terminateWorker();
}

/** Holds the next operation that reaches `point` there until `resume()` (for an operation still alive). */
export function pauseAt(point: CrashPoint): { paused: Promise<void>; resume: () => void } {
  let paused!: () => void;
  let resume!: () => void;
  const reached = new Promise<void>((r) => {
    paused = r;
  });
  const released = new Promise<void>((r) => {
    resume = r;
  });
  setCrashHook((p) => {
    if (p !== point) return;
    paused();
    return released;
  });
  return {
    paused: reached,
    resume: () => {
      setCrashHook(undefined);
      resume();
    },
  };
}
