import { GITDIR, openRepoFs } from '../../workers/store/repoFs.ts';

/** The files of a repo's pack directory, sorted: what a fetch stored, or did not. */
export async function packFiles(repoId: string): Promise<string[]> {
  return (await openRepoFs(repoId).promises.readdir(`${GITDIR}/objects/pack`)).sort();
}

/** The typed error a call failed with; fails the test if it succeeded. */
export async function failure(p: Promise<unknown>): Promise<Error & { code: string }> {
  try {
    await p;
  } catch (err) {
    return err as Error & { code: string };
  }
  throw new Error('the call unexpectedly succeeded');
}
