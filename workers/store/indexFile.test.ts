import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type IndexEntry, parseIndexModes, serializeIndex } from './indexFile.ts';

const dir = mkdtempSync(join(tmpdir(), 'indexfile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const git = (args: string[], input?: string) =>
  execFileSync('git', ['-C', dir, ...args], {
    input,
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' },
  }).toString();

describe('parseIndexModes', () => {
  it('reads what git ls-files --stage reads from an index git wrote (versions 2 and 3)', () => {
    git(['init', '-q']);
    const blob = git(['hash-object', '-w', '--stdin'], 'x').trim();
    const long = `${'deep/'.repeat(900)}leaf.txt`; // a path of 0xfff bytes or more: NUL-terminated
    for (const [mode, path] of [
      ['100644', 'a.txt'],
      ['100755', 'run.sh'],
      ['120000', 'link'],
      ['160000', 'sub'],
      ['100644', 'dir/ünï.txt'],
      ['100644', long],
    ]) {
      const oid = mode === '160000' ? 'ab'.repeat(20) : blob;
      git(['update-index', '--add', '--cacheinfo', `${mode},${oid},${path}`]);
    }
    const expected = new Map(
      git(['ls-files', '--stage', '-z'])
        .split('\0')
        .filter(Boolean)
        .map((l) => [l.slice(l.indexOf('\t') + 1), l.split(' ')[0]] as [string, string]),
    );
    expect(expected.size).toBe(6);
    for (const version of ['2', '3']) {
      git(['update-index', '--index-version', version]);
      // An intent-to-add entry makes version 3 write extended flags.
      if (version === '3') {
        git(['update-index', '--add', '--cacheinfo', `100644,${blob},later.txt`]);
        execFileSync('sh', ['-c', `echo y > "${dir}/later.txt" && git -C "${dir}" add -N later.txt`]);
        expected.set('later.txt', '100644');
      }
      const modes = parseIndexModes(new Uint8Array(readFileSync(join(dir, '.git', 'index'))));
      expect(modes).toEqual(expected);
    }
  });

  it('null for version 4 and for bytes that are not an index', () => {
    git(['update-index', '--index-version', '4']);
    expect(parseIndexModes(new Uint8Array(readFileSync(join(dir, '.git', 'index'))))).toBeNull();
    expect(parseIndexModes(new TextEncoder().encode('not an index at all'))).toBeNull();
  });
});

describe('serializeIndex', () => {
  it("writes an index git reads back: every path, mode and id, in git's order, its checksum good", () => {
    const repo = mkdtempSync(join(tmpdir(), 'indexfile-write-'));
    try {
      const run = (args: string[]) =>
        execFileSync('git', ['-C', repo, ...args], {
          env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' },
        });
      run(['init', '-q']);
      const stat = {
        ctimeMs: 1_700_000_000_123.5,
        mtimeMs: 1_700_000_001_999,
        dev: 1,
        ino: 7,
        uid: 1,
        gid: 1,
        size: 3,
      };
      const entries: IndexEntry[] = [
        // Not in byte order: "a-b" sorts before "a/b", "é" after "z", as git compares bytes.
        { path: 'z.txt.orig', oid: '7'.repeat(40), mode: 0o100644, stat },
        { path: 'z.txt', oid: '1'.repeat(40), mode: 0o100644, stat },
        { path: 'a/b', oid: '2'.repeat(40), mode: 0o100755, stat },
        { path: 'a-b', oid: '3'.repeat(40), mode: 0o120000, stat },
        { path: 'é.md', oid: '4'.repeat(40), mode: 0o100644, stat },
        { path: 'sub', oid: '5'.repeat(40), mode: 0o160000, stat },
        { path: `${'deep/'.repeat(900)}leaf`, oid: '6'.repeat(40), mode: 0o100644, stat },
      ];
      const bytes = serializeIndex(entries);
      // Exactly the entries (62 bytes, the name, 1 to 8 NULs) and the checksum: git skips checking a
      // checksum of zeros (index.skipHash), so trailing slack would pass it unseen.
      const sizes = entries.map((e) => Math.floor((62 + Buffer.byteLength(e.path) + 8) / 8) * 8);
      expect(bytes.length).toBe(12 + sizes.reduce((a, b) => a + b) + 20);
      expect(Buffer.from(bytes.subarray(-20)).toString('hex')).toBe(
        createHash('sha1').update(bytes.subarray(0, -20)).digest('hex'),
      );
      writeFileSync(join(repo, '.git', 'index'), bytes);
      const listed = run(['ls-files', '--stage', '-z']).toString().split('\0').filter(Boolean);
      const order = [...entries].sort((x, y) => Buffer.compare(Buffer.from(x.path), Buffer.from(y.path)));
      expect(listed).toEqual(order.map((e) => `${e.mode.toString(8)} ${e.oid} 0\t${e.path}`));
      expect(parseIndexModes(bytes)?.get('a/b')).toBe('100755');
      // The times as git reads them: seconds and nanoseconds.
      const debug = run(['ls-files', '--debug', 'z.txt']).toString();
      expect(debug).toContain('ctime: 1700000000:123500000');
      expect(debug).toContain('mtime: 1700000001:999000000');
      expect(debug).toContain('size: 3');
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});

/** An index of `version` holding `entries` as gitformat-index lays them out, with no checksum. */
function craftIndex(
  version: number,
  entries: { name: string; mode: number; stage?: number; flags?: number; extended?: boolean }[],
): Uint8Array {
  const parts: number[] = [0x44, 0x49, 0x52, 0x43, 0, 0, 0, version, 0, 0, 0, entries.length];
  for (const e of entries) {
    const name = [...new TextEncoder().encode(e.name)];
    const fixed = new Uint8Array(62);
    const view = new DataView(fixed.buffer);
    view.setUint32(24, e.mode);
    const flags =
      ((e.stage ?? 0) << 12) | (e.extended ? 0x4000 : 0) | (e.flags ?? 0) | Math.min(name.length, 0xfff);
    view.setUint16(60, flags);
    const entry = [...fixed, ...(e.extended ? [0x20, 0] : []), ...name];
    const padded = Math.floor((entry.length + 8) / 8) * 8;
    parts.push(...entry, ...new Array(padded - entry.length).fill(0));
  }
  return new Uint8Array(parts);
}

describe('parseIndexModes on crafted bytes', () => {
  const file = { name: 'a.txt', mode: 0o100644 };

  it('reads only stage 0, extended flags only in version 3', () => {
    const modes = (v: number, e: Parameters<typeof craftIndex>[1]) => parseIndexModes(craftIndex(v, e));
    expect(modes(2, [file])).toEqual(new Map([['a.txt', '100644']]));
    expect(modes(3, [file, { name: 'b', mode: 0o100755, extended: true }])).toEqual(
      new Map([
        ['a.txt', '100644'],
        ['b', '100755'],
      ]),
    );
    expect(
      modes(2, [
        { ...file, stage: 1 },
        { ...file, stage: 2, mode: 0o100755 },
      ]),
    ).toEqual(new Map());
    expect(modes(2, [{ ...file, stage: 3 }])).toEqual(new Map());
    // Bit 0x4000 in version 2 is not "extended": the name starts right after the flags.
    expect(modes(2, [{ ...file, flags: 0x4000 }])).toEqual(new Map([['a.txt', '100644']]));
    expect(modes(2, [])).toEqual(new Map());
    expect(modes(2, [{ name: '', mode: 0o100644 }])).toEqual(new Map([['', '100644']]));
  });

  it('null for another signature or version, and for an entry or name cut off', () => {
    const good = craftIndex(2, [file]);
    expect(parseIndexModes(good.subarray(0, 12))).toBeNull(); // the count says 1
    expect(parseIndexModes(good.subarray(0, 11))).toBeNull();
    expect(parseIndexModes(craftIndex(2, []).subarray(0, 12))).toEqual(new Map());
    const other = good.slice();
    other[0] = 0x45;
    expect(parseIndexModes(other)).toBeNull();
    for (const version of [1, 4]) expect(parseIndexModes(craftIndex(version, [file]))).toBeNull();
    // The fixed fields end at the end: a name of 0 bytes fits, one of 5 does not.
    expect(parseIndexModes(craftIndex(2, [{ name: '', mode: 0o100644 }]).subarray(0, 12 + 62))).toEqual(
      new Map([['', '100644']]),
    );
    expect(parseIndexModes(good.subarray(0, 12 + 61))).toBeNull();
    // The name ends at the end (no padding): read; one byte short: refused.
    expect(parseIndexModes(good.subarray(0, 12 + 62 + 5))).toEqual(new Map([['a.txt', '100644']]));
    expect(parseIndexModes(good.subarray(0, 12 + 62 + 4))).toBeNull();
    // A long name's NUL missing.
    const long = craftIndex(2, [{ name: 'x'.repeat(0xfff), mode: 0o100644 }]);
    expect(parseIndexModes(long)?.get('x'.repeat(0xfff))).toBe('100644');
    expect(parseIndexModes(long.subarray(0, 12 + 62 + 0xfff))).toBeNull();
  });
});
