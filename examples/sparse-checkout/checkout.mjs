// @ts-check
// `node checkout.mjs <repository URL> <folder> <destination> [ref]`: writes that one folder of the
// repository under <destination>, fetching no other file.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createEngine } from 'blobless';
import { memoryStorage } from 'blobless/storage/memory';
import { sparseCheckout } from './sparseCheckout.js';

const [url, folder, destination, ref] = process.argv.slice(2);
if (!url || !folder || !destination) {
  console.error('usage: node checkout.mjs <repository URL> <folder> <destination> [ref]');
  process.exit(2);
}

const engine = createEngine({ storage: memoryStorage() });
try {
  const { files, requests, bytes } = await sparseCheckout(engine, { url, folder, ref });
  for (const [path, content] of files) {
    await mkdir(dirname(join(destination, path)), { recursive: true });
    await writeFile(join(destination, path), content);
  }
  console.log(`${files.size} files of ${folder}/, their contents in ${requests} request(s), ${bytes} bytes`);
} finally {
  await engine.close();
}
