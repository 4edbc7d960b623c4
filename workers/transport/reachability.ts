import { TransportError } from './errors.ts';

/**
 * Why a request failed before any response, when a browser says only "Failed to fetch" for every cause.
 * A `no-cors` request to the same address is answered (opaquely) by any host that is there, CORS headers
 * or not; it fails only where no host answers (the name does not resolve, nothing listens, the page may
 * not connect to it). So the probe tells "the host is missing" from "the host refuses other pages".
 * Where `no-cors` means nothing (Node's fetch), the probe is a plain request and says what it finds.
 */
export async function diagnoseUnreachable(
  url: URL,
  cause: string,
  opts: { fetch?: typeof fetch; signal?: AbortSignal } = {},
): Promise<TransportError> {
  const doFetch = opts.fetch ?? fetch;
  const host = url.host;
  const answered = await doFetch(`${url.href}/info/refs?service=git-upload-pack`, {
    mode: 'no-cors',
    credentials: 'omit',
    signal: opts.signal,
  }).then(
    (res) => {
      void res.body?.cancel().catch(() => undefined);
      return true;
    },
    () => false,
  );
  if (answered) {
    return new TransportError(
      'CORS_REFUSED',
      `${host} answered, but does not let other web pages read its answers (it sends no CORS headers), so a browser cannot clone from it directly.`,
      undefined,
      { beforeResponse: true },
    );
  }
  return new TransportError(
    'HOST_UNREACHABLE',
    `Could not reach ${host}: the host was not found, nothing answers there, or this page may not connect to it. (${cause})`,
    undefined,
    { beforeResponse: true },
  );
}
