import * as Comlink from 'comlink';
import { api, type GitApi } from '../../workers/api.ts';
import { installTransferHandlers, releasingSignals } from '../../workers/rpc.ts';

/** One call as the worker side received it: the AbortSignal that crossed, and the progress it reported. */
export interface WorkerCall {
  method: string;
  signal: AbortSignal | undefined;
  progress: { phase: string; [key: string]: unknown }[];
}

/**
 * The git API behind a real comlink link over a MessageChannel, exposed as git.worker.ts exposes it: what
 * the page's `gitClient` talks to, in one process. `calls` is what the worker side of the link saw, so a test
 * can tell when an abort has crossed. `overrides` stand in for methods of the API on the worker side.
 */
export function linkedGitClient(overrides: Partial<GitApi> = {}): {
  client: Comlink.Remote<GitApi>;
  calls: WorkerCall[];
} {
  installTransferHandlers();
  const calls: WorkerCall[] = [];
  const watched: Record<string, unknown> = {};
  for (const [method, fn] of Object.entries({ ...api, ...overrides })) {
    watched[method] = (...args: unknown[]) => {
      const call: WorkerCall = {
        method,
        signal: args.find((a): a is AbortSignal => a instanceof AbortSignal),
        progress: [],
      };
      calls.push(call);
      const seen = args.map((a) =>
        typeof a === 'function'
          ? (p: WorkerCall['progress'][number]) => {
              call.progress.push(p);
              return a(p);
            }
          : a,
      );
      return (fn as (...a: unknown[]) => unknown)(...seen);
    };
  }
  const { port1, port2 } = new MessageChannel();
  Comlink.expose(releasingSignals(watched), port1);
  return { client: Comlink.wrap<GitApi>(port2), calls };
}
