import { describe, expect, it } from 'vitest';
import { explainRefNameProblem, refNameProblem } from '../../model/refName.ts';
import { OperationError } from '../common/errors.ts';
import { checkRemoteRefNames } from './remoteRefNames.ts';

const url = 'https://git.example/r.git';
const why = (name: string) => explainRefNameProblem(refNameProblem(name)!);

describe('checkRemoteRefNames', () => {
  it('keeps the names git accepts, HEAD among them, in order, and says nothing', () => {
    const refs = [{ name: 'HEAD' }, { name: 'refs/heads/main' }, { name: 'refs/tags/v1' }];
    expect(checkRemoteRefNames(refs, 'refs/heads/main', url)).toEqual({ kept: refs, warnings: [] });
    expect(checkRemoteRefNames([], undefined, url)).toEqual({ kept: [], warnings: [] });
  });

  it('skips a bad name with one warning naming it and why', () => {
    const bad = 'refs/heads/a..b';
    const result = checkRemoteRefNames([{ name: bad }, { name: 'refs/heads/ok' }], undefined, url);
    expect(result.kept).toEqual([{ name: 'refs/heads/ok' }]);
    expect(result.warnings).toEqual([
      `Skipped a remote ref whose name git would refuse: "refs/heads/a..b" (${why(bad)}).`,
    ]);
  });

  it('names five bad names and counts the rest', () => {
    const bad = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `refs/heads/x${i}.lock` }));
    const shown = (n: number) =>
      bad(n)
        .map((r) => `"${r.name}" (${why(r.name)})`)
        .join(', ');
    expect(checkRemoteRefNames(bad(5), undefined, url).warnings).toEqual([
      `Skipped 5 remote refs whose names git would refuse: ${shown(5)}.`,
    ]);
    expect(checkRemoteRefNames(bad(7), undefined, url)).toEqual({
      kept: [],
      warnings: [`Skipped 7 remote refs whose names git would refuse: ${shown(5)} and 2 more.`],
    });
  });

  it('refuses a HEAD that points to a bad name, saying nothing was stored', () => {
    const target = 'refs/heads/../../config';
    let err: unknown;
    try {
      checkRemoteRefNames([{ name: 'refs/heads/main' }], target, url);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(OperationError);
    expect(err).toMatchObject({
      code: 'HOSTILE_REF_NAME',
      message:
        `The server at ${url} says its HEAD points to "refs/heads/../../config", which is not a valid ref name ` +
        `(${why(target)}). Nothing was stored. Clone a branch by name, or report it to the server's owner.`,
    });
  });
});
