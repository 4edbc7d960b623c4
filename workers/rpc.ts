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
  for (const key of ['status', 'path', 'paths', 'oid', 'remoteMessage']) {
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
      if (signal.aborted) port1.postMessage('abort');
      else signal.addEventListener('abort', () => port1.postMessage('abort'), { once: true });
      return [port2, [port2]];
    },
    deserialize: (port: MessagePort) => {
      const controller = new AbortController();
      port.onmessage = () => {
        controller.abort();
        port.close();
      };
      return controller.signal;
    },
  } as Comlink.TransferHandler<AbortSignal, MessagePort>);
}
