import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type FS from '@isomorphic-git/lightning-fs';

/** Copies a directory out of lightning-fs onto disk, so the real git can read what Blobless stored. */
export async function exportDir(fs: FS, from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const name of await fs.promises.readdir(from)) {
    const src = `${from}/${name}`;
    const dest = join(to, name);
    const st = await fs.promises.lstat(src);
    if (st.isDirectory()) await exportDir(fs, src, dest);
    else await writeFile(dest, (await fs.promises.readFile(src)) as Uint8Array);
  }
}
