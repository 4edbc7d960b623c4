import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * git's verdict on packs: `git index-pack` of each (one shell runs them all, to spare a process start per
 * pack from Node). Returns, for each pack, the `.idx` git wrote, or null where git refused the pack.
 */
export async function gitIndexPacks(packs: Uint8Array[]): Promise<(Buffer | null)[]> {
  const dir = await mkdtemp(join(tmpdir(), 'blobless-index-packs-'));
  try {
    for (let i = 0; i < packs.length; i++) await writeFile(join(dir, `${i}.pack`), packs[i]);
    await run(
      'sh',
      [
        '-c',
        `for i in $(seq 0 ${packs.length - 1}); do git index-pack -o "$i.idx" "$i.pack" 2>/dev/null; done; true`,
      ],
      { cwd: dir, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } },
    );
    return Promise.all(packs.map((_, i) => readFile(join(dir, `${i}.idx`)).catch(() => null)));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
