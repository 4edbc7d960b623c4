// blobless/worker: an engine made in a worker, offered to the page through comlink (the page wraps it with
// client.ts's wrapEngine). Everything the adapter keeps is per endpoint: two engines can be exposed on two
// ports of one worker.

import * as Comlink from 'comlink';
import { OperationError, serializeError } from './errors.ts';
import {
  ABORT,
  ENGINE_METHODS,
  type EngineEndpoint,
  type EngineMethod,
  REPO_METHODS,
  type RepoMethod,
  SETTLED,
} from './remote.ts';
import type { Engine, OperationHooks } from './types.ts';

/** Which of the engine's operations a page may call through this worker (exposeEngine). */
export interface ExposeOptions {
  /** The engine's methods the page may call; all when absent (the widget's worker offers readFileMinimal only). */
  engineMethods?: readonly EngineMethod[];
  /** The repo methods the page may call; all when absent. */
  repoMethods?: readonly RepoMethod[];
}

type Method = (args: unknown, hooks: OperationHooks<unknown>) => Promise<unknown>;

/**
 * Offers `engine` on `endpoint` (the worker's global scope by default): every call's progress reaches the
 * page's callback, its AbortSignal cancels it here, and its errors arrive as the same classes. A promise of
 * an engine (one made after probing the storage, say) is offered at once: calls wait for it.
 */
export function exposeEngine(
  engine: Engine | Promise<Engine>,
  endpoint: Comlink.Endpoint = globalThis as unknown as Comlink.Endpoint,
  options: ExposeOptions = {},
): void {
  const engineMethods = new Set<string>(options.engineMethods ?? ENGINE_METHODS);
  const repoMethods = new Set<string>(options.repoMethods ?? REPO_METHODS);
  const surface: EngineEndpoint = {
    async call(repoId, method, args, progress, port) {
      const controller = port ? new AbortController() : undefined;
      if (port && controller) {
        port.onmessage = (event) => {
          if (event.data === ABORT) controller.abort();
        };
      }
      const hooks: OperationHooks<unknown> = {
        // Not awaited: progress is told, not asked; the page's answers would only slow the operation.
        onProgress: progress ? (p) => void Promise.resolve(progress(p)).catch(() => undefined) : undefined,
        signal: controller?.signal,
      };
      try {
        const allowed = repoId === null ? engineMethods : repoMethods;
        if (!allowed.has(method)) {
          throw new OperationError('INVALID_INPUT', `This worker does not offer "${method}".`);
        }
        const ready = await engine;
        const target = (repoId === null ? ready : ready.repo(repoId)) as unknown as Record<string, Method>;
        return { ok: true, value: await target[method](args, hooks) };
      } catch (err) {
        return { ok: false, error: serializeError(err) };
      } finally {
        // Neither side keeps its port, nor the page its abort listener and its callback's proxy.
        port?.postMessage(SETTLED);
        port?.close();
        (progress as Partial<Comlink.ProxyMethods> | undefined)?.[Comlink.releaseProxy]?.();
      }
    },
    async dispose(repoId) {
      (await engine).repo(repoId).dispose();
    },
    async close() {
      await (await engine).close();
    },
  };
  Comlink.expose(surface, endpoint);
}
