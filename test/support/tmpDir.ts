import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/**
 * A scratch folder for the test file that calls this at its top level: made before its tests, removed after
 * them. Returns a getter, since the folder exists only once beforeAll ran.
 */
export function useTmpDir(name: string): () => string {
  let dir: string | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), `blobless-${name}-`));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return () => {
    if (!dir) throw new Error('useTmpDir: the folder is made in beforeAll; read it inside a test or hook');
    return dir;
  };
}
