import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { MissingObjectError } from '../workers/ops/common/errors.ts';
import { maintenanceIdle } from '../workers/ops/maintenance/packMaintenance.ts';
import { readFile } from '../workers/ops/read/readFile.ts';
import { SHORT_RETRY, testEngine } from './support/engine.ts';
import { gitBuffer, git as gitCli } from './support/git.ts';
import { failure, packFiles } from './support/repoChecks.ts';
import { repoStats, resetStats } from './support/serverStats.ts';

const { engine, ctx } = testEngine({ retry: SHORT_RETRY });

const serverUrl = inject('gitServerUrl');
const fixturesDir = inject('fixturesDir');
const repo = 'features.git';
const bare = join(fixturesDir, repo);

interface TreeFile {
  mode: string;
  type: string;
  oid: string;
  path: string;
}

/** `git ls-tree -r -z HEAD`: every file, symlink and submodule of the commit. */
async function lsTree(ref: string): Promise<TreeFile[]> {
  const out = await gitCli(['ls-tree', '-r', '-z', ref], { cwd: bare });
  return out
    .split('\0')
    .filter(Boolean)
    .map((line) => {
      const [meta, path] = line.split('\t');
      const [mode, type, oid] = meta.split(' ');
      return { mode, type, oid, path };
    });
}

/** Paths git's diff calls binary (numstat "-\t-"), against the empty tree. */
async function binaryPaths(ref: string): Promise<Set<string>> {
  const out = await gitCli(['diff', '--numstat', '-z', '4b825dc642cb6eb9a060e54bf8d69288fbee4904', ref], {
    cwd: bare,
  });
  const binary = new Set<string>();
  for (const record of out.split('\0').filter(Boolean)) {
    const [added, removed, path] = record.split('\t');
    if (added === '-' && removed === '-') binary.add(path);
  }
  return binary;
}

/** The size of a pack holding just this blob, as git packs it: what one lazy fetch of it should cost. */
async function onePackSize(oid: string): Promise<number> {
  const { execFile } = await import('node:child_process');
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      ['pack-objects', '--stdout', '-q'],
      { cwd: bare, encoding: 'buffer', maxBuffer: 1 << 30 },
      (err, stdout) => (err ? reject(err) : resolve(stdout.length)),
    );
    child.stdin?.end(`${oid}\n`);
  });
}

describe('readFile in a blob:none clone of features.git', () => {
  let repoId: string;

  beforeAll(async () => {
    repoId = (await engine.clone({ url: `${serverUrl}/${repo}` })).repoId;
  });

  it('fetches only that blob, in one request, about the size of a pack of it alone', async () => {
    const path = 'assets/random-64k.bin';
    const oid = (await gitCli(['rev-parse', `HEAD:${path}`], { cwd: bare })).trim();
    await resetStats();
    const file = await readFile(ctx, repoId, 'HEAD', path);
    const stats = await repoStats(repo);
    expect(stats.requests).toBe(1);
    // The pack plus its framing: the section header and flush, and 5 bytes per sideband packet, which
    // upload-pack sends as it reads pack-objects' pipe (as little as 8 KiB at a time).
    const pack = await onePackSize(oid);
    expect(stats.bytesSent).toBeGreaterThanOrEqual(pack);
    expect(stats.bytesSent - pack).toBeLessThanOrEqual(32 + 5 * Math.ceil(pack / 8192));
    expect(file.oid).toBe(oid);
    expect(file.binary).toBe(true);
    expect(file.size).toBe(65536);
  });

  it('a second read of it makes no request', async () => {
    await resetStats();
    await readFile(ctx, repoId, 'HEAD', 'assets/random-64k.bin');
    expect((await repoStats(repo)).requests).toBe(0);
  });

  it('concurrent reads of one path make one request', async () => {
    await resetStats();
    const reads = await Promise.all([1, 2, 3].map(() => readFile(ctx, repoId, 'main', 'src/new-name.js')));
    expect((await repoStats(repo)).requests).toBe(1);
    for (const r of reads) expect(Buffer.from(r.bytes).toString()).toBe('export const name = "new";\n');
  });

  it('every file of HEAD reads as `git show HEAD:<path>`, with its mode and git`s binary verdict', async () => {
    const files = await lsTree('HEAD');
    const binary = await binaryPaths('HEAD');
    const kinds = new Set(files.map((f) => f.mode));
    // The fixture has every kind: regular, executable, symlink, submodule.
    expect([...kinds].sort()).toEqual(['100644', '100755', '120000', '160000']);
    for (const f of files) {
      if (f.mode === '160000') continue;
      const ours = await readFile(ctx, repoId, 'HEAD', f.path);
      const theirs = await gitBuffer(['show', `HEAD:${f.path}`], { cwd: bare });
      expect(Buffer.compare(Buffer.from(ours.bytes), theirs), f.path).toBe(0);
      expect(ours.oid, f.path).toBe(f.oid);
      expect(ours.mode, f.path).toBe(f.mode);
      expect(ours.size, f.path).toBe(theirs.length);
      expect(ours.binary, f.path).toBe(binary.has(f.path));
    }
    // The awkward ones, by name.
    const paths = files.map((f) => f.path);
    expect(paths).toContain('docs/with space/ünïcødé – файл.txt');
    expect(paths).toContain('empty.txt');
    expect((await readFile(ctx, repoId, 'HEAD', 'readme-link')).bytes).toEqual(
      new TextEncoder().encode('README.md'),
    );
    expect((await readFile(ctx, repoId, 'HEAD', 'assets/random-1.5m.bin')).size).toBe(1572864);
    await maintenanceIdle(ctx, repoId);
  });

  it('reads files of other refs: a branch, a tag, an abbreviated commit id', async () => {
    const devOnly = 'src/unmerged.js';
    const content = await gitBuffer(['show', `feature/x:${devOnly}`], { cwd: bare });
    expect(
      Buffer.compare(Buffer.from((await readFile(ctx, repoId, 'feature/x', devOnly)).bytes), content),
    ).toBe(0);
    const old = await gitBuffer(['show', 'v0.1:src/old-name.js'], { cwd: bare });
    expect(
      Buffer.compare(Buffer.from((await readFile(ctx, repoId, 'v0.1', 'src/old-name.js')).bytes), old),
    ).toBe(0);
    const short = (await gitCli(['rev-parse', '--short=8', 'v0.2-light'], { cwd: bare })).trim();
    const notes = await gitBuffer(['show', 'v0.2-light:notes/evolving.txt'], { cwd: bare });
    expect(
      Buffer.compare(Buffer.from((await readFile(ctx, repoId, short, '/notes/evolving.txt')).bytes), notes),
    ).toBe(0);
  });

  it('a missing path or a folder is PATH_NOT_FOUND; a submodule is IS_SUBMODULE; all without a request', async () => {
    await resetStats();
    for (const path of ['no/such/file', 'src', 'README.md/x', '', 'src/../README.md']) {
      const err = await failure(readFile(ctx, repoId, 'HEAD', path));
      expect(err.code, path).toBe('PATH_NOT_FOUND');
    }
    const sub = await failure(readFile(ctx, repoId, 'HEAD', 'vendor/sub'));
    expect(sub.code).toBe('IS_SUBMODULE');
    expect(sub.message).toMatch(/submodule/);
    expect((await failure(readFile(ctx, repoId, 'no-such-branch', 'README.md'))).code).toBe('REF_NOT_FOUND');
    expect((await repoStats(repo)).requests).toBe(0);
  });
});

describe('readFile offline', () => {
  it('a missing blob is a MissingObjectError naming path and oid, nothing is stored, present blobs still read', async () => {
    const { repoId } = await engine.clone({ url: `${serverUrl}/${repo}` });
    const present = await readFile(ctx, repoId, 'HEAD', 'README.md');
    const record = (await ctx.store.registry.get(repoId))!;
    await ctx.store.registry.put({ ...record, url: 'http://127.0.0.1:9/features.git' });
    const before = await packFiles(ctx, repoId);
    const packsBefore = (await ctx.store.packs.for(repoId)).packs.length;

    const path = 'docs/with space/ünïcødé – файл.txt';
    const oid = (await gitCli(['rev-parse', `HEAD:${path}`], { cwd: bare })).trim();
    const err = (await failure(readFile(ctx, repoId, 'HEAD', path))) as MissingObjectError;
    expect(err).toBeInstanceOf(MissingObjectError);
    expect(err.code).toBe('MISSING_OBJECT');
    expect(err.oid).toBe(oid);
    expect(err.path).toBe(path);
    expect(
      err.message.startsWith(
        `${path} (blob ${oid.slice(0, 10)}…) is not stored in this browser and could not be fetched: `,
      ),
    ).toBe(true);
    expect(err.message).toMatch(/Could not reach 127\.0\.0\.1:9/);
    expect(err.message).toMatch(/Connect to the network and try again\.$/);

    expect(await packFiles(ctx, repoId)).toEqual(before);
    expect((await ctx.store.packs.for(repoId)).packs.length).toBe(packsBefore);
    const again = await readFile(ctx, repoId, 'HEAD', 'README.md');
    expect(again.bytes).toEqual(present.bytes);
  });
});
