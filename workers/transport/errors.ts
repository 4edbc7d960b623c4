export type TransportErrorCode =
  | 'INVALID_URL'
  /** The device says it has no network (`navigator.onLine` is false): no request was sent. */
  | 'OFFLINE'
  | 'NETWORK_ERROR'
  | 'HTTP_UNAUTHORIZED'
  | 'HTTP_FORBIDDEN'
  | 'HTTP_NOT_FOUND'
  | 'HTTP_ERROR'
  | 'ABORTED';

/** A request that did not produce a usable HTTP response. */
export class TransportError extends Error {
  override readonly name = 'TransportError';
  constructor(
    readonly code: TransportErrorCode,
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}
