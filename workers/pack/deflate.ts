// zlib deflate (RFC 1950), for the few objects Blobless writes into a pack itself: the local bases that
// complete a thin pack. The platform's CompressionStream ("deflate" is the zlib format) in browsers and
// Node 18+, so no compressor is bundled for this rare path.

export async function deflate(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([data as Uint8Array<ArrayBuffer>])
    .stream()
    .pipeThrough(new CompressionStream('deflate'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
