/**
 * A Web Locks manager for Node, enough for lightning-fs (Mutex2: `ifAvailable`, `signal`, `steal`) and
 * repoLock.ts: exclusive locks by name, granted in request order. Installed on `navigator.locks`, it lets
 * two module instances (two "workers", see vi.resetModules) share one lock space as a browser's do.
 */
type Callback<T> = (lock: { name: string } | null) => Promise<T> | T;

interface Options {
  ifAvailable?: boolean;
  steal?: boolean;
  signal?: AbortSignal;
}

export class FakeLockManager {
  private readonly held = new Map<string, Promise<void>>();

  request<T>(
    name: string,
    optionsOrCallback: Options | Callback<T>,
    maybeCallback?: Callback<T>,
  ): Promise<T> {
    const options = typeof optionsOrCallback === 'function' ? {} : optionsOrCallback;
    const callback = (
      typeof optionsOrCallback === 'function' ? optionsOrCallback : maybeCallback
    ) as Callback<T>;
    if (options.steal) {
      this.held.delete(name);
      return this.run(name, callback);
    }
    const current = this.held.get(name);
    if (current && options.ifAvailable) return Promise.resolve(callback(null));
    return (async () => {
      while (this.held.has(name)) {
        const waiting = this.held.get(name)!;
        if (options.signal) {
          await Promise.race([
            waiting,
            new Promise<never>((_, reject) =>
              options.signal!.addEventListener(
                'abort',
                () => reject(new DOMException('aborted', 'AbortError')),
                {
                  once: true,
                },
              ),
            ),
          ]);
        } else await waiting;
      }
      return this.run(name, callback);
    })();
  }

  private run<T>(name: string, callback: Callback<T>): Promise<T> {
    let release!: () => void;
    const done = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.held.set(name, done);
    const result = Promise.resolve().then(() => callback({ name }));
    void result
      .finally(() => {
        if (this.held.get(name) === done) this.held.delete(name);
        release();
      })
      .catch(() => undefined);
    return result;
  }
}
