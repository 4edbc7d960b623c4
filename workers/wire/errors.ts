/**
 * Errors raised by the wire layer. Each carries a stable `code` for programs and a message a person can act
 * on; the message says what the server sent and what it probably means.
 */

/** Every code a WireError carries; the type below is made from it, so the two cannot drift apart. */
export const WIRE_ERROR_CODES = Object.freeze([
  // A pkt-line length header was malformed: not hex, a reserved length (0003), an empty line (0004) or too long.
  'PKT_LINE_INVALID',
  // The byte stream ended inside a pkt-line: the connection was cut short. Retrying may help.
  'PKT_LINE_TRUNCATED',
  // We were asked to encode more than one pkt-line can hold. A bug on our side, not the server's.
  'PKT_LINE_TOO_LONG',
  // Well-formed pkt-lines, but not the message the protocol calls for at this point.
  'PROTOCOL_UNEXPECTED',
  // The response stopped at a packet boundary before the packet that ends it. Retrying may help.
  'RESPONSE_TRUNCATED',
  // The URL answered, but not like a smart-HTTP git server (an HTML page, a dumb server, a proxy error).
  'NOT_GIT',
  // A request could not be built from the given options (an oid that is not hex, a line feed in an argument).
  'REQUEST_INVALID',
  // A response, or one line of progress text, is larger than its cap in WireLimits; `limit` names the setting.
  'LIMIT_EXCEEDED',
] as const);

export type WireErrorCode = (typeof WIRE_ERROR_CODES)[number];

/** The one code of RemoteError. */
export const REMOTE_ERROR_CODES = Object.freeze(['REMOTE_ERROR'] as const);

/**
 * The server's answer broke git's protocol (pkt-line framing, the order of sections, a cap of WireLimits
 * exceeded), or a request could not be built. Nothing of the answer was stored.
 */
export class WireError extends Error {
  /** Always `WireError`. */
  override readonly name = 'WireError';
  /** What went wrong, for programs to branch on (WIRE_ERROR_CODES); the message is for people. */
  readonly code: WireErrorCode;
  /** Offset in the response byte stream where the problem was found, when it concerns framing. */
  readonly byteOffset: number | undefined;
  /** For LIMIT_EXCEEDED, the WireLimits setting that was exceeded (`maxLsRefsBytes`, ...). */
  readonly limit: string | undefined;

  constructor(
    code: WireErrorCode,
    message: string,
    options?: { byteOffset?: number; cause?: unknown; limit?: string },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.byteOffset = options?.byteOffset;
    this.limit = options?.limit;
  }
}

/**
 * The server itself reported a failure: an `ERR <text>` packet (gitprotocol-pack: "an error packet MAY be
 * sent" wherever a pkt-line is expected) or a message on sideband 3 ("fatal error message just before stream
 * aborts", gitprotocol-v2: fetch, packfile section). `remoteMessage` is the server's text, verbatim.
 */
export class RemoteError extends Error {
  /** Always `RemoteError`. */
  override readonly name = 'RemoteError';
  /** Always REMOTE_ERROR: what the server said is in `remoteMessage`. */
  readonly code: (typeof REMOTE_ERROR_CODES)[number] = 'REMOTE_ERROR';
  /** The server's text, verbatim but trimmed (`not our ref 1234…`). */
  readonly remoteMessage: string;
  /** How the server delivered the message. */
  readonly channel: 'err-packet' | 'sideband-3';

  constructor(remoteMessage: string, channel: 'err-packet' | 'sideband-3') {
    const trimmed = remoteMessage.trim();
    // The server's own words say what went wrong; what to do is ours to add.
    const said = trimmed.replace(/\.$/, '');
    super(
      channel === 'sideband-3'
        ? `The git server aborted while sending the pack: ${said}. Try again later, and tell the server's owner if it keeps failing.`
        : `The git server refused the request: ${said}. Check the repository's address and your access to it, then try again.`,
    );
    this.remoteMessage = trimmed;
    this.channel = channel;
  }
}
