import { join } from 'node:path';
import type { Engine } from '../../workers/engine/types.ts';
import { git } from './git.ts';
import type { ServedCopies } from './servedCopies.ts';

/**
 * A served copy of `fixture` cloned twice, by Blobless and by git (`git clone <gitArgs>`): the same
 * starting state, for holding an operation to what git does from there. `cli` is git's clone.
 */
export async function twinClones(
  engine: Engine,
  served: ServedCopies,
  fixture: string,
  name: string,
  scratch: string,
  gitArgs: string[] = ['--filter=blob:none', '--no-checkout'],
): Promise<{ url: string; bare: string; repoId: string; cli: string }> {
  const url = await served.copy(fixture, name);
  const { repoId } = await engine.clone({ url });
  const cli = join(scratch, `${name}-cli`);
  await git(['clone', '-q', ...gitArgs, url, cli]);
  return { url, bare: served.path(name), repoId, cli };
}
