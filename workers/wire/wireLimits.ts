/**
 * Caps on what a server's text responses may cost us. Every byte a server sends is hostile input (a deep link
 * can make anyone's browser clone any URL); without caps, an endless info/refs or ls-refs answer fills the
 * memory, and progress text that never ends a line grows one string forever.
 */
export interface WireLimits {
  /**
   * Bytes of `GET info/refs`. A v2 server sends only its capabilities (under 1 KiB); a v0/v1 server lists
   * every ref there, pull-request refs included on GitHub: about 80 bytes a ref, so 64 MiB is some 800,000
   * refs, well beyond the largest repositories' counts.
   */
  maxInfoRefsBytes: number;
  /** Bytes of an ls-refs answer: the same line sizes as info/refs's, for the heads and tags only. */
  maxLsRefsBytes: number;
  /**
   * Characters of one line of progress text (sideband 2) without a line end. git's progress meters are under
   * 100, a pkt-line carries at most 65,515: 64 KiB leaves any real message whole.
   */
  maxProgressLineBytes: number;
}

export const DEFAULT_WIRE_LIMITS: Readonly<WireLimits> = Object.freeze({
  maxInfoRefsBytes: 64 * 1024 * 1024,
  maxLsRefsBytes: 64 * 1024 * 1024,
  maxProgressLineBytes: 64 * 1024,
});
