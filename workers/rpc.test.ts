import * as Comlink from 'comlink';
import { afterEach, describe, expect, it } from 'vitest';
import { HostileTreeError } from './ops/common/errors.ts';
import { installTransferHandlers, RemoteOperationError, releasingSignals } from './rpc.ts';

installTransferHandlers();

/** One comlink link over a real MessageChannel, as between the page and the git worker. */
function link<T extends object>(target: T) {
  const { port1, port2 } = new MessageChannel();
  Comlink.expose(releasingSignals(target), port1);
  const remote = Comlink.wrap<T>(port2);
  const close = () => {
    port1.close();
    port2.close();
  };
  return { remote, close };
}

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** Resolves when `port` closes: Node's MessagePort says so with a 'close' event. */
function closed(port: MessagePort): Promise<void> {
  return new Promise((resolve) => port.addEventListener('close', () => resolve(), { once: true }));
}

describe('AbortSignal across the boundary', () => {
  it('aborts the worker-side signal when the caller aborts', async () => {
    let sawAbort: Promise<boolean> | undefined;
    const { remote, close } = link({
      wait(signal: AbortSignal) {
        sawAbort = new Promise((resolve) => signal.addEventListener('abort', () => resolve(true)));
        return sawAbort;
      },
    });
    closers.push(close);
    const controller = new AbortController();
    const call = remote.wait(controller.signal);
    await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    expect(await call).toBe(true);
  });

  it('closes both ports and drops the abort listener once the call settles', async () => {
    let workerPort: MessagePort | undefined;
    const handler = Comlink.transferHandlers.get('abortSignal')!;
    const deserialize = handler.deserialize.bind(handler);
    // Watch the port the worker side receives, to see it closed.
    handler.deserialize = (port: MessagePort) => {
      workerPort = port;
      return deserialize(port);
    };
    try {
      const { remote, close } = link({ echo: async (n: number, _signal: AbortSignal) => n + 1 });
      closers.push(close);
      const controller = new AbortController();
      const removed: string[] = [];
      const remove = controller.signal.removeEventListener.bind(controller.signal);
      controller.signal.removeEventListener = ((type: string, listener: EventListener) => {
        removed.push(type);
        remove(type, listener);
      }) as typeof controller.signal.removeEventListener;
      expect(await remote.echo(1, controller.signal)).toBe(2);
      await closed(workerPort!);
      await expect.poll(() => removed).toContain('abort');
    } finally {
      handler.deserialize = deserialize;
    }
  });

  it('releases the ports of a call that failed, and keeps its typed error', async () => {
    class Typed extends Error {
      readonly code = 'SOMETHING_TYPED';
    }
    let workerPort: MessagePort | undefined;
    const handler = Comlink.transferHandlers.get('abortSignal')!;
    const deserialize = handler.deserialize.bind(handler);
    handler.deserialize = (port: MessagePort) => {
      workerPort = port;
      return deserialize(port);
    };
    try {
      const { remote, close } = link({
        fail: async (_signal: AbortSignal) => {
          throw new Typed('nope');
        },
      });
      closers.push(close);
      const err = await (remote.fail(new AbortController().signal) as Promise<never>).catch(
        (e: RemoteOperationError) => e,
      );
      expect(err).toBeInstanceOf(RemoteOperationError);
      expect(err.code).toBe('SOMETHING_TYPED');
      await closed(workerPort!);
    } finally {
      handler.deserialize = deserialize;
    }
  });
});

describe('a refused tree across the boundary', () => {
  it('arrives as HOSTILE_TREE with the entry and the check', async () => {
    const { remote, close } = link({
      fail(): void {
        throw new HostileTreeError('x/', 'EMPTY_NAME', 'An entry has an empty name.');
      },
    });
    closers.push(close);
    const err = (await Promise.resolve(remote.fail()).catch((e: unknown) => e)) as RemoteOperationError;
    expect(err).toBeInstanceOf(RemoteOperationError);
    expect([err.name, err.code, err.details]).toEqual([
      'OperationError',
      'HOSTILE_TREE',
      { path: 'x/', check: 'EMPTY_NAME' },
    ]);
    expect(err.message).toContain('"x/"');
  });
});
