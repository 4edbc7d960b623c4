/**
 * Runs `fn` with every fetch of this process sending `Origin: origin`, as a browser does on the app's
 * cross-origin requests (Node's fetch sends none): the client then passes a proxy's Origin check.
 */
export async function withOrigin<T>(origin: string, fn: () => Promise<T>): Promise<T> {
  const real = globalThis.fetch;
  globalThis.fetch = (input, init) => {
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    headers.set('Origin', origin);
    return real(input, { ...init, headers });
  };
  try {
    return await fn();
  } finally {
    globalThis.fetch = real;
  }
}
