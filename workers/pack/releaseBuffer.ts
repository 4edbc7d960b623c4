/**
 * Gives the memory under `view` back now, for a buffer nothing reads again. Dropping the last reference
 * leaves it to a collection, and V8 collects ArrayBuffers lazily: tens of MB of dead tables and spent
 * chunks stayed through large.git's clone. Detaching (transferToFixedLength, ES2024) frees at once; where
 * it is missing, a resizable buffer shrinks to nothing and a plain one waits for the collector as before.
 * Every view of the buffer reads as empty afterwards.
 */
export function releaseBuffer(view: ArrayBufferView): void {
  const buffer = view.buffer as ArrayBuffer & { transferToFixedLength?: (length: number) => ArrayBuffer };
  if (buffer.transferToFixedLength) buffer.transferToFixedLength(0);
  else if (buffer.resizable) buffer.resize(0);
}
