/** Bytes git looks at to call a blob binary (xdiff-interface.c FIRST_FEW_BYTES). */
const FIRST_FEW_BYTES = 8000;

/** git's rule without attributes (buffer_is_binary): a NUL byte in the first 8,000 bytes. */
export function isBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, FIRST_FEW_BYTES).includes(0);
}
