import { afterAll, describe, expect, it } from 'vitest';
import { memoryStorage } from '../storage/memory.ts';
import {
  removePackFiles,
  writeGitDirBase,
  writeHead,
  writeLooseRefs,
  writeNewGitDir,
  writePack,
  writePackedRefs,
  writePackFile,
  writeShallow,
} from './gitDir.ts';
import { GITDIR, type PromiseFs } from './repoFs.ts';
import { Store } from './store.ts';

const store = new Store(memoryStorage(), 'blobless');
const repoId = 'gitdir-ref-guard';
afterAll(() => store.repoFs.delete(repoId));

const base = {
  description: 'Cloned by Blobless',
  config: { remote: { url: 'https://h/r.git', fetchRefspec: '+refs/heads/*:refs/remotes/origin/*' } },
  head: { branch: 'main' },
  packedRefs: [],
  shallow: [],
  pack: { checksum: '0'.repeat(40), pack: new Uint8Array(32), idx: new Uint8Array(32) },
};

describe('writeNewGitDir refuses ref names git refuses, before writing anything', () => {
  it.each([
    ['a loose ref', { looseRefs: [{ name: 'refs/heads/../../config', value: '1'.repeat(40) }] }],
    ['a packed ref', { looseRefs: [], packedRefs: [{ name: 'refs/tags/a\nb', oid: '1'.repeat(40) }] }],
    ['the HEAD branch', { looseRefs: [], head: { branch: '../../config' } }],
  ])('%s', async (_, bad) => {
    const fs = store.repoFs.open(repoId).promises;
    await expect(writeNewGitDir(fs, { ...base, ...bad })).rejects.toMatchObject({ code: 'REF_NAME_INVALID' });
    await expect(fs.readdir(GITDIR)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('writeShallow', () => {
  const A = 'a'.repeat(40);
  const B = 'b'.repeat(40);

  it('writes the commits sorted and once each, and removes the file when none is left', async () => {
    const fs = store.repoFs.open(repoId).promises;
    await fs.mkdir(GITDIR).catch(() => undefined);
    await writeShallow(fs, [B, A, B]);
    expect(await fs.readFile(`${GITDIR}/shallow`, 'utf8')).toBe(`${A}\n${B}\n`);
    await writeShallow(fs, []);
    await expect(fs.stat(`${GITDIR}/shallow`)).rejects.toMatchObject({ code: 'ENOENT' });
    // Nothing to remove is not an error: a clone that is not shallow writes no file.
    await writeShallow(fs, []);
  });
});

describe('writePackedRefs', () => {
  const A = 'a'.repeat(40);

  it('rewrites packed-refs and drops the loose refs that would hide an updated value', async () => {
    const fs = store.repoFs.open(repoId).promises;
    await writeLooseRefs(fs, [{ name: 'refs/remotes/origin/main', value: 'b'.repeat(40) }]);
    expect(await fs.readFile(`${GITDIR}/refs/remotes/origin/main`, 'utf8')).toBe(`${'b'.repeat(40)}\n`);
    await writePackedRefs(
      fs,
      [{ name: 'refs/remotes/origin/main', oid: A }],
      ['refs/remotes/origin/main', 'refs/tags/none'],
    );
    expect(await fs.readFile(`${GITDIR}/packed-refs`, 'utf8')).toContain(`${A} refs/remotes/origin/main\n`);
    await expect(fs.stat(`${GITDIR}/refs/remotes/origin/main`)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a name git refuses, before writing', async () => {
    const fs = store.repoFs.open(repoId).promises;
    await expect(writePackedRefs(fs, [], ['refs/heads/../../config'])).rejects.toMatchObject({
      code: 'REF_NAME_INVALID',
    });
    // The packed-refs of the test above, not the empty list this call would have written.
    expect(await fs.readFile(`${GITDIR}/packed-refs`, 'utf8')).toContain(`${A} refs/remotes/origin/main\n`);
  });
});

describe('writeNewGitDir', () => {
  const A = 'a'.repeat(40);
  const B = 'b'.repeat(40);

  it('lays out the directory git clone leaves: pack, config, refs, shallow and HEAD', async () => {
    const id = 'gitdir-layout';
    const fs = store.repoFs.open(id).promises;
    try {
      const pack = new Uint8Array([1, 2, 3]);
      const idx = new Uint8Array([4, 5]);
      await writeNewGitDir(fs, {
        ...base,
        pack: { checksum: A, pack, idx, promisor: '' },
        packedRefs: [{ name: 'refs/tags/v1', oid: A, peeled: B }],
        looseRefs: [{ name: 'refs/remotes/origin/main', value: B }],
        shallow: [B],
        head: { branch: 'main' },
      });
      const read = (path: string) => fs.readFile(`${GITDIR}/${path}`, 'utf8');
      expect(await fs.readFile(`${GITDIR}/objects/pack/pack-${A}.pack`)).toEqual(pack);
      expect(await fs.readFile(`${GITDIR}/objects/pack/pack-${A}.idx`)).toEqual(idx);
      expect(await read(`objects/pack/pack-${A}.promisor`)).toBe('');
      expect(await read('description')).toBe('Cloned by Blobless\n');
      expect(await read('info/exclude')).toBe('');
      expect(await read('config')).toContain('url = https://h/r.git\n');
      expect(await read('packed-refs')).toBe(
        `# pack-refs with: peeled fully-peeled sorted \n${A} refs/tags/v1\n^${B}\n`,
      );
      expect(await read('refs/remotes/origin/main')).toBe(`${B}\n`);
      expect(await read('shallow')).toBe(`${B}\n`);
      expect(await read('HEAD')).toBe('ref: refs/heads/main\n');
      for (const dir of ['objects/info', 'refs/heads', 'refs/tags', 'refs/remotes/origin', 'info']) {
        expect((await fs.stat(`${GITDIR}/${dir}`)).isDirectory()).toBe(true);
      }
    } finally {
      await store.repoFs.delete(id);
    }
  });

  it('writes a detached HEAD, and no .promisor for a pack fetched without a filter', async () => {
    const id = 'gitdir-detached';
    const fs = store.repoFs.open(id).promises;
    try {
      await writeNewGitDir(fs, { ...base, looseRefs: [], head: { oid: A } });
      expect(await fs.readFile(`${GITDIR}/HEAD`, 'utf8')).toBe(`${A}\n`);
      await expect(fs.stat(`${GITDIR}/objects/pack/pack-${'0'.repeat(40)}.promisor`)).rejects.toMatchObject({
        code: 'ENOENT',
      });
    } finally {
      await store.repoFs.delete(id);
    }
  });
});

/** `fs` with `method` failing, with `error`, for the paths `fails` picks. */
function failing(
  fs: PromiseFs,
  method: 'writeFile' | 'unlink',
  fails: (path: string) => boolean,
  error: Error,
): PromiseFs {
  return new Proxy(fs, {
    get(target, key) {
      const value = Reflect.get(target, key);
      if (key !== method) return typeof value === 'function' ? value.bind(target) : value;
      return (path: string, ...rest: unknown[]) =>
        fails(path)
          ? Promise.reject(error)
          : (value as (...a: unknown[]) => unknown).call(target, path, ...rest);
    },
  });
}

describe('writePack', () => {
  const sum = 'c'.repeat(40);
  const dir = `${GITDIR}/objects/pack`;

  it('stores a pack that is a view of a larger buffer without the slack', async () => {
    const written: Uint8Array[] = [];
    const recording = {
      mkdir: async () => undefined,
      stat: async () => ({ isDirectory: () => true }),
      writeFile: async (_path: string, data: Uint8Array) => void written.push(data),
    } as unknown as PromiseFs;
    const buffer = new Uint8Array([9, 1, 2, 3, 9]);
    await writePack(recording, { checksum: sum, pack: buffer.subarray(1, 4), idx: buffer.subarray(0, 2) });
    expect(written.map((w) => [...w])).toEqual([
      [1, 2, 3],
      [9, 1],
    ]);
    expect(written.map((w) => w.buffer.byteLength)).toEqual([3, 2]);
    // A pack that fills its buffer is stored as it is, not copied.
    const whole = new Uint8Array([7, 7]);
    await writePackFile(recording, sum, whole);
    expect(written[2]).toBe(whole);
    // The .pack written already (the clone's own write): only its index follows.
    await writePack(recording, { checksum: sum, pack: whole, idx: new Uint8Array([5]), packWritten: true });
    expect(written.slice(3).map((w) => [...w])).toEqual([[5]]);
  });

  it('leaves nothing of a pack whose index could not be written, and says what failed', async () => {
    const id = 'gitdir-pack-fails';
    const fs = store.repoFs.open(id).promises;
    try {
      const full = failing(
        fs,
        'writeFile',
        (p) => p.endsWith('.idx'),
        new Error('QuotaExceededError: disk full'),
      );
      const err = await writePack(full, {
        checksum: sum,
        pack: new Uint8Array(250_000),
        idx: new Uint8Array(8),
        promisor: '',
      }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'STORAGE_FULL' });
      expect((err as Error).message).toMatch(/^The browser refused to store the 0\.3 MB pack: /);
      expect(await fs.readdir(dir)).toEqual([]);

      const broken = failing(fs, 'writeFile', (p) => p.endsWith('.pack'), new Error('I/O'));
      await expect(writePackFile(broken, sum, new Uint8Array(1))).rejects.toMatchObject({
        code: 'STORAGE_FAILED',
        message: 'Could not store the 0.0 MB pack: I/O',
      });
    } finally {
      await store.repoFs.delete(id);
    }
  });

  it('is deleted index first, skipping missing files; another failure is a storage error', async () => {
    const id = 'gitdir-pack-remove';
    const fs = store.repoFs.open(id).promises;
    try {
      await writePack(fs, { checksum: sum, pack: new Uint8Array(1), idx: new Uint8Array(1) });
      await fs.writeFile(`${dir}/pack-${sum}.keep`, '', 'utf8');
      const order: string[] = [];
      const watched = new Proxy(fs, {
        get(target, key) {
          const value = Reflect.get(target, key);
          if (key !== 'unlink') return typeof value === 'function' ? value.bind(target) : value;
          return (path: string) => {
            order.push(path.slice(path.lastIndexOf('.') + 1));
            return target.unlink(path);
          };
        },
      });
      await removePackFiles(watched, sum);
      expect(order).toEqual(['idx', 'pack', 'promisor', 'keep']);
      expect(await fs.readdir(dir)).toEqual([]);

      await writePack(fs, { checksum: sum, pack: new Uint8Array(1), idx: new Uint8Array(1) });
      const locked = failing(
        fs,
        'unlink',
        (p) => p.endsWith('.pack'),
        Object.assign(new Error('busy'), { code: 'EBUSY' }),
      );
      await expect(removePackFiles(locked, sum)).rejects.toMatchObject({
        code: 'STORAGE_FAILED',
        message: `Could not store the deletion of pack ${sum}: busy`,
      });
    } finally {
      await store.repoFs.delete(id);
    }
  });
});

describe('writeGitDirBase and writeHead', () => {
  it('make the folders git init makes, and refuse a HEAD branch git refuses before writing it', async () => {
    const id = 'gitdir-base';
    const fs = store.repoFs.open(id).promises;
    try {
      await writeGitDirBase(fs, base);
      for (const dir of [
        'objects/pack',
        'objects/info',
        'refs/heads',
        'refs/tags',
        'refs/remotes/origin',
        'info',
      ]) {
        expect((await fs.stat(`${GITDIR}/${dir}`)).isDirectory()).toBe(true);
      }
      await expect(writeHead(fs, { branch: '../../config' })).rejects.toMatchObject({
        code: 'REF_NAME_INVALID',
      });
      await expect(fs.stat(`${GITDIR}/HEAD`)).rejects.toMatchObject({ code: 'ENOENT' });
      await writeHead(fs, { branch: 'main' });
      expect(await fs.readFile(`${GITDIR}/HEAD`, 'utf8')).toBe('ref: refs/heads/main\n');
    } finally {
      await store.repoFs.delete(id);
    }
  });

  it("writeNewGitDir says a storage failure is the repository's, and passes a pack's on as it is", async () => {
    const id = 'gitdir-new-fails';
    const fs = store.repoFs.open(id).promises;
    try {
      const noDescription = failing(fs, 'writeFile', (p) => p.endsWith('/description'), new Error('I/O'));
      await expect(writeNewGitDir(noDescription, { ...base, looseRefs: [] })).rejects.toMatchObject({
        code: 'STORAGE_FAILED',
        message: 'Could not store the repository: I/O',
      });
      const noIndex = failing(fs, 'writeFile', (p) => p.endsWith('.idx'), new Error('I/O'));
      await expect(writeNewGitDir(noIndex, { ...base, looseRefs: [] })).rejects.toMatchObject({
        code: 'STORAGE_FAILED',
        message: 'Could not store the 0.0 MB pack: I/O',
      });
    } finally {
      await store.repoFs.delete(id);
    }
  });
});

describe('unlinking a file that may be absent', () => {
  it('passes on any failure but its absence', async () => {
    const id = 'gitdir-unlink';
    const fs = store.repoFs.open(id).promises;
    try {
      await fs.mkdir(GITDIR);
      await fs.writeFile(`${GITDIR}/shallow`, 'x', 'utf8');
      const locked = failing(
        fs,
        'unlink',
        (p) => p.endsWith('shallow'),
        Object.assign(new Error('busy'), { code: 'EBUSY' }),
      );
      await expect(writeShallow(locked, [])).rejects.toThrow('busy');
    } finally {
      await store.repoFs.delete(id);
    }
  });
});
