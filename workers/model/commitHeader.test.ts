import { describe, expect, it } from 'vitest';
import { parseCommitHeader } from './commitHeader.ts';

const bytes = (text: string) => new TextEncoder().encode(text);
const A = '2aa3b76517dc5410d2eda6e8a743682ab44041b5';
const B = 'c9dae6b299ee61368fc4d49d43f1a02b2bc67672';
const C = '148ced623146759280b01c31cd6af3cf4c07ba20';

describe('parseCommitHeader', () => {
  it('reads the tree, the parents in order and the committer time of what git writes', () => {
    const commit = `tree ${A}\nparent ${B}\nparent ${C}\nauthor Ada <a@b> 1700000000 +0100\ncommitter Bo <b@c> 17179869184 -0230\n\nMerge\n\ncommitter X <x> 1 +0000\n`;
    expect(parseCommitHeader(bytes(commit))).toEqual({
      tree: A,
      parents: [B, C],
      committerTime: 17179869184,
    });
  });

  it('skips the lines it does not need, a signature continued over several lines among them', () => {
    const commit = `tree ${A}\nauthor A <a> 5 +0000\ncommitter C <c> 7 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n committer Z <z> 9 +0000\n -----END PGP SIGNATURE-----\n\nroot`;
    expect(parseCommitHeader(bytes(commit))).toEqual({ tree: A, parents: [], committerTime: 7 });
  });

  it('refuses headers git would not write, for the caller to read the commit the slower way', () => {
    for (const commit of [
      '',
      `parent ${B}\ntree ${A}\ncommitter C <c> 7 +0000\n\n`,
      `tree ${A.toUpperCase()}\ncommitter C <c> 7 +0000\n\n`,
      `tree ${A}\nparent ${B.slice(1)}\ncommitter C <c> 7 +0000\n\n`,
      `tree ${A}\nauthor A <a> 5 +0000\n\n`,
      `tree ${A}\ncommitter C <c> 7 +0000\ncommitter D <d> 8 +0000\n\n`,
      `tree ${A}\ncommitter C <c> soon +0000\n\n`,
      `tree ${A}\ncommitter C 7 +0000\n\n`,
    ]) {
      expect(parseCommitHeader(bytes(commit)), JSON.stringify(commit)).toBeNull();
    }
  });
});
