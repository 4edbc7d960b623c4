import { describe, expect, it } from 'vitest';
import { parsePackedRefs, serializePackedRefs } from './packedRefs.ts';

const a = 'a'.repeat(40);
const b = 'b'.repeat(40);
const c = 'c'.repeat(40);

describe('packed-refs', () => {
  it('reads back what it writes, peeled tags included', () => {
    const refs = [
      { name: 'refs/remotes/origin/main', oid: a },
      { name: 'refs/tags/v1', oid: b, peeled: c },
    ];
    expect(parsePackedRefs(serializePackedRefs(refs))).toEqual(refs);
  });

  it('reads the file git writes and skips lines that are not refs', () => {
    const text = `# pack-refs with: peeled fully-peeled sorted \n${a} refs/heads/main\n${b} refs/tags/v1\n^${c}\nnot a ref\n${a} HEAD\n^zz\n`;
    expect(parsePackedRefs(text)).toEqual([
      { name: 'refs/heads/main', oid: a },
      { name: 'refs/tags/v1', oid: b, peeled: c },
    ]);
  });
});
