import * as Comlink from 'comlink';

/**
 * comlink transfer handlers shared by the UI and the worker. This file holds no git code, so the main
 * thread may import it: it carries AbortSignals across the boundary and keeps typed errors typed.
 */

export interface SerializedError {
  name: string;
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

/** What the UI receives for any failed call: the worker's typed error, with its stable `code`. */
export class RemoteOperationError extends Error {
  readonly code: string;
  readonly details?: Record<string, unknown>;
  constructor(e: SerializedError) {
    super(e.message);
    this.name = e.name;
    this.code = e.code;
    this.details = e.details;
  }
}

function serializeError(value: unknown): SerializedError {
  const err = value as { name?: string; code?: unknown; message?: string } & Record<string, unknown>;
  const details: Record<string, unknown> = {};
  for (const key of [
    'status',
    'path',
    'paths',
    'oid',
    'remoteMessage',
    'check',
    'repoId',
    'host',
    'rejected',
    'proxy',
  ]) {
    if (err && err[key] !== undefined) details[key] = err[key];
  }
  return {
    name: err?.name ?? 'Error',
    code: typeof err?.code === 'string' ? err.code : 'INTERNAL',
    message: err?.message ?? String(value),
    details,
  };
}

let installed = false;

export function installTransferHandlers(): void {
  if (installed) return;
  installed = true;
  // comlink does not export its marker for thrown values, so keep its own test and replace the payload.
  const builtIn = Comlink.transferHandlers.get('throw')!;
  Comlink.transferHandlers.set('throw', {
    canHandle: builtIn.canHandle,
    serialize: ({ value }: { value: unknown }) => [{ error: serializeError(value) }, []],
    deserialize: (serialized: { error: SerializedError }) => {
      throw new RemoteOperationError(serialized.error);
    },
  } as unknown as Comlink.TransferHandler<unknown, unknown>);

  Comlink.transferHandlers.set('abortSignal', {
    canHandle: (value: unknown): value is AbortSignal =>
      typeof AbortSignal !== 'undefined' && value instanceof AbortSignal,
    serialize: (signal: AbortSignal) => {
      const { port1, port2 } = new MessageChannel();
      const abort = () => port1.postMessage(ABORT);
      const settle = () => {
        signal.removeEventListener('abort', abort);
        port1.close();
      };
      // The worker says when the call settled: then neither side keeps its port, nor the signal its listener.
      port1.onmessage = (event) => {
        if (event.data === SETTLED) settle();
      };
      if (signal.aborted) abort();
      else signal.addEventListener('abort', abort, { once: true });
      return [port2, [port2]];
    },
    deserialize: (port: MessagePort) => {
      const controller = new AbortController();
      port.onmessage = (event) => {
        if (event.data === ABORT) controller.abort();
      };
      signalPorts.set(controller.signal, port);
      return controller.signal;
    },
  } as Comlink.TransferHandler<AbortSignal, MessagePort>);
}

const ABORT = 'abort';
const SETTLED = 'settled';

/** The worker side's port of each AbortSignal that came across the boundary. */
const signalPorts = new WeakMap<AbortSignal, MessagePort>();

/** Closes the ports of the signals a finished call received, on both sides of the boundary. */
function releaseSignals(args: unknown[]): void {
  for (const arg of args) {
    if (!(arg instanceof AbortSignal)) continue;
    const port = signalPorts.get(arg);
    if (!port) continue;
    signalPorts.delete(arg);
    port.postMessage(SETTLED);
    port.close();
  }
}

/**
 * The object to expose from the worker: each method of `target`, which releases the AbortSignal ports
 * of its call once the call settles. Without it every cancellable call would leave two MessagePorts
 * (and the UI's abort listener) alive for as long as the page lives.
 */
export function releasingSignals<T extends object>(target: T): T {
  const wrapped: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(target)) {
    wrapped[key] =
      typeof value !== 'function'
        ? value
        : (...args: unknown[]) => {
            let result: unknown;
            try {
              result = value.apply(target, args);
            } catch (err) {
              releaseSignals(args);
              throw err;
            }
            if (result instanceof Promise) {
              return result.finally(() => releaseSignals(args));
            }
            releaseSignals(args);
            return result;
          };
  }
  return wrapped as T;
}
