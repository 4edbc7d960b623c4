// blobless/client: the page's side of an engine that runs in a worker (exposed there by worker.ts's
// exposeEngine). It carries no git code: only comlink and this adapter; the error classes come lazily. The engine it
// returns has the Engine interface: every call is `op(args, { onProgress, signal })`, progress reaches the
// callback, the signal cancels in the worker, and errors arrive as their classes with their codes.

import * as Comlink from 'comlink';
import { ABORT, ENGINE_METHODS, type EngineEndpoint, REPO_METHODS, SETTLED } from './remote.ts';
import type { Engine, OperationHooks, Repo } from './types.ts';

// Types only: the error classes load with the first error (below), not with the page. A page that wants
// them for `instanceof` imports them from the package's main entry (`blobless`), the same module.
export type * from './errors.ts';
export type * from './types.ts';

type Call = (
  repoId: string | null,
  method: string,
  args: unknown,
  hooks?: OperationHooks<unknown>,
) => Promise<unknown>;

/** The engine in `worker` (a Worker, a MessagePort: any comlink endpoint), as the Engine interface. */
export function wrapEngine(worker: Comlink.Endpoint): Engine {
  const remote = Comlink.wrap<EngineEndpoint>(worker);
  const call: Call = async (repoId, method, args, hooks = {}) => {
    const { onProgress, signal } = hooks;
    let port: MessagePort | undefined;
    if (signal) {
      const { port1, port2 } = new MessageChannel();
      const abort = () => port1.postMessage(ABORT);
      port1.onmessage = (event) => {
        if (event.data !== SETTLED) return;
        signal.removeEventListener('abort', abort);
        port1.close();
      };
      if (signal.aborted) abort();
      else signal.addEventListener('abort', abort, { once: true });
      port = port2;
    }
    const outcome = await remote.call(
      repoId,
      method,
      args,
      onProgress ? Comlink.proxy(onProgress) : undefined,
      port ? Comlink.transfer(port, [port]) : undefined,
    );
    if (outcome.ok) return outcome.value;
    // The error classes load with the first error, not with the page: a page that never sees one never
    // pays for them. A class the page imported itself is the same class (one module), so `instanceof` holds.
    const { rebuildError } = await import('./errors.ts');
    throw rebuildError(outcome.error);
  };

  const repos = new Map<string, Repo>();
  const methods = <T>(repoId: string | null, names: readonly string[]): T =>
    Object.fromEntries(
      names.map((name) => [
        name,
        (args?: unknown, hooks?: OperationHooks<unknown>) => call(repoId, name, args, hooks),
      ]),
    ) as T;
  return {
    ...methods<Omit<Engine, 'repo' | 'close'>>(null, ENGINE_METHODS),
    repo(id) {
      let repo = repos.get(id);
      if (!repo) {
        repo = {
          id,
          ...methods<Omit<Repo, 'id' | 'dispose'>>(id, REPO_METHODS),
          dispose() {
            repos.delete(id);
            void remote.dispose(id);
          },
        };
        repos.set(id, repo);
      }
      return repo;
    },
    async close() {
      repos.clear();
      await remote.close();
      remote[Comlink.releaseProxy]();
    },
  };
}
