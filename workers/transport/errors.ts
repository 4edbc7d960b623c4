/** Every code a TransportError carries; the type below is made from it, so the two cannot drift apart. */
export const TRANSPORT_ERROR_CODES = Object.freeze([
  'INVALID_URL',
  // The device says it has no network (`navigator.onLine` is false): no request was sent.
  'OFFLINE',
  'NETWORK_ERROR',
  // The first request failed and nothing answers at the address either (reachability.ts): the host name
  // does not resolve, nothing listens there, or the page may not connect to it.
  'HOST_UNREACHABLE',
  // The host answers, but without the CORS headers a browser needs to hand a page its answer.
  'CORS_REFUSED',
  // The response stopped sending for longer than the stall timeout (retryPolicy.ts STALL_TIMEOUT_MS).
  'TIMEOUT',
  'HTTP_UNAUTHORIZED',
  'HTTP_FORBIDDEN',
  'HTTP_NOT_FOUND',
  'HTTP_ERROR',
  // A token would cross the network in plain http (to the git host or to a CORS proxy).
  'INSECURE_TRANSPORT',
  // A redirect git would not follow, or one that would carry the token to another host.
  'REDIRECT_REFUSED',
  // The CORS proxy itself said no (its rules, not the git host's answer); the message is the proxy's.
  'PROXY_REFUSED',
  // The token would go through a CORS proxy the person has not agreed to for this repository (in the
  // token dialog, which names the proxy): nothing was sent.
  'PROXY_CONSENT_REQUIRED',
  'ABORTED',
] as const);

export type TransportErrorCode = (typeof TRANSPORT_ERROR_CODES)[number];

/** What a TransportError knows beside its code and status: whether and when sending again may help. */
export interface TransportErrorDetail {
  /** The server's Retry-After (429, 503), in milliseconds. */
  retryAfterMs?: number;
  /** NETWORK_ERROR: the connection failed before any byte of the response (so sending again is safe). */
  beforeResponse?: boolean;
}

/** A request that did not produce a usable HTTP response. */
export class TransportError extends Error {
  /** Always `TransportError`. */
  override readonly name = 'TransportError';
  constructor(
    /** What went wrong, for programs to branch on (TRANSPORT_ERROR_CODES); the message is for people. */
    readonly code: TransportErrorCode,
    message: string,
    /** The HTTP status, when the server answered (401, 404, 503…). */
    readonly status?: number,
    detail: TransportErrorDetail = {},
  ) {
    super(message);
    this.retryAfterMs = detail.retryAfterMs;
    this.beforeResponse = detail.beforeResponse;
  }
  /** The server's Retry-After (429, 503), in milliseconds. */
  readonly retryAfterMs?: number;
  /** NETWORK_ERROR: the connection failed before any byte of the response (so sending again is safe). */
  readonly beforeResponse?: boolean;
}
