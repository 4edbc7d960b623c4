import { wrapEngine } from '../../workers/engine/client.ts';
import type { Engine, OperationHooks, Repo } from '../../workers/engine/types.ts';
import { exposeEngine } from '../../workers/engine/worker.ts';

/** One call as the worker side received it: the AbortSignal that crossed, and the progress it reported. */
export interface WorkerCall {
  /** The repo it was made on, or null for the engine's own methods. */
  repoId: string | null;
  method: string;
  signal: AbortSignal | undefined;
  progress: { phase: string; [key: string]: unknown }[];
}

type Overrides = { [K in Exclude<keyof Engine, 'repo'>]?: Engine[K] } & {
  repo?: { [K in keyof Repo]?: Repo[K] };
};

/**
 * `engine` behind a real comlink link over a MessageChannel, exposed as git.worker.ts exposes it
 * (exposeEngine) and wrapped as the page wraps it (wrapEngine): what the page's `gitClient` talks to, in one
 * process. `calls` is what the worker side of the link saw, so a test can tell when an abort has crossed.
 * `overrides` stand in for methods of the engine (and of every repo) on the worker side.
 */
export function linkedEngine(
  engine: Engine,
  overrides: Overrides = {},
): { client: Engine; calls: WorkerCall[] } {
  const calls: WorkerCall[] = [];
  const watch = <F>(repoId: string | null, method: string, fn: F): F =>
    ((args: unknown, hooks: OperationHooks<WorkerCall['progress'][number]> = {}) => {
      const call: WorkerCall = { repoId, method, signal: hooks.signal, progress: [] };
      calls.push(call);
      const onProgress = hooks.onProgress;
      return (fn as (a: unknown, h: unknown) => unknown)(args, {
        ...hooks,
        onProgress: onProgress
          ? (p: WorkerCall['progress'][number]) => {
              call.progress.push(p);
              onProgress(p);
            }
          : undefined,
      });
    }) as F;
  const { repo: repoOverrides = {}, ...engineOverrides } = overrides;
  const watched = { ...engine } as Record<string, unknown>;
  for (const [method, fn] of Object.entries({ ...engine, ...engineOverrides })) {
    if (method === 'repo' || method === 'close' || method === 'warmUp' || method === 'repoEvents') continue;
    watched[method] = watch(null, method, fn);
  }
  watched.repo = (id: string) => {
    const real = engine.repo(id);
    const repo = { ...real } as Record<string, unknown>;
    for (const [method, fn] of Object.entries({ ...real, ...repoOverrides })) {
      if (method !== 'id' && method !== 'dispose' && typeof fn === 'function')
        repo[method] = watch(id, method, fn);
    }
    return repo;
  };
  const { port1, port2 } = new MessageChannel();
  exposeEngine(watched as unknown as Engine, port1);
  return { client: wrapEngine(port2), calls };
}
