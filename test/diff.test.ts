import { execFile } from 'node:child_process';
import { chmod, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type GitServer, startGitServer } from '../server/gitServer.ts';
import { maintenanceIdle } from '../workers/ops/maintenance/packMaintenance.ts';
import {
  type CommitDiff,
  diffCommits,
  diffFile,
  type FileChange,
  lineDiff,
} from '../workers/ops/read/diff.ts';
import { testEngine } from './support/engine.ts';
import { git as gitCli } from './support/git.ts';
import { repoStats, resetStats } from './support/serverStats.ts';
import { useTmpDir } from './support/tmpDir.ts';

const { engine, ctx } = testEngine();

const serverUrl = inject('gitServerUrl');
const fixturesDir = inject('fixturesDir');
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
const STATUS: Record<string, FileChange['status']> = {
  A: 'added',
  D: 'deleted',
  M: 'modified',
  T: 'type-changed',
};

/** `git diff --name-status --no-renames -z A B`, as our changes. */
async function nameStatus(cwd: string, a: string, b: string): Promise<{ path: string; status: string }[]> {
  const fields = (await gitCli(['diff', '--name-status', '--no-renames', '-z', a, b], { cwd })).split('\0');
  const out: { path: string; status: string }[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2)
    out.push({ status: STATUS[fields[i]] ?? fields[i], path: fields[i + 1] });
  return out;
}

async function binaryPaths(cwd: string, a: string, b: string): Promise<Set<string>> {
  const out = await gitCli(['diff', '--numstat', '--no-renames', '-z', a, b], { cwd });
  const binary = new Set<string>();
  for (const record of out.split('\0').filter(Boolean)) {
    const [added, removed, path] = record.split('\t');
    if (added === '-' && removed === '-') binary.add(path);
  }
  return binary;
}

/**
 * The +/- lines of `git diff -U3 --no-renames A B -- path`, headers left out. The pathspec also matches a
 * folder of that name, so only the section whose ---/+++ lines name exactly `path` is kept.
 */
async function gitChangedLines(cwd: string, a: string, b: string, path: string): Promise<string[]> {
  const out = await gitCli(['-c', 'core.quotePath=false', 'diff', '-U3', '--no-renames', a, b, '--', path], {
    cwd,
  });
  const sections = out.split(/^(?=diff --git )/m);
  const names = (section: string) =>
    section
      .split('\n')
      .filter((l) => l.startsWith('--- ') || l.startsWith('+++ '))
      .slice(0, 2)
      .map((l) =>
        l
          .slice(4)
          .replace(/\t$/, '')
          .replace(/^[ab]\//, ''),
      );
  const section = sections.find((s) => names(s).includes(path));
  if (!section) return [];
  const lines = section.split('\n');
  const first = lines.findIndex((l) => l.startsWith('@@'));
  if (first < 0) return [];
  return lines.slice(first).filter((l) => l.startsWith('+') || l.startsWith('-'));
}

function ourChangedLines(hunks: Awaited<ReturnType<typeof diffFile>>['hunks']): string[] {
  return hunks.flatMap((h) => h.lines.filter((l) => l.kind !== ' ').map((l) => `${l.kind}${l.text}`));
}

/** Checks diffCommits and, for every text file it lists, diffFile against git on the same pair. */
async function checkPair(repoId: string, cwd: string, a: string | null, b: string): Promise<CommitDiff> {
  const ours = await diffCommits(ctx, repoId, a, b);
  const base =
    a ?? (await gitCli(['rev-list', '--parents', '-n', '1', b], { cwd })).trim().split(' ')[1] ?? EMPTY_TREE;
  const expected = await nameStatus(cwd, base, b);
  const label = `${a ?? `${b}^`}..${b}`;
  expect(
    ours.files.map((f) => ({ path: f.path, status: f.status })),
    label,
  ).toEqual(expected);
  const binary = await binaryPaths(cwd, base, b);
  for (const f of ours.files) {
    if (f.oldMode === '160000' || f.newMode === '160000') continue;
    if (f.status === 'type-changed') continue;
    const diff = await diffFile(ctx, repoId, f.oldOid ?? null, f.newOid ?? null);
    expect(diff.binary, `${label} ${f.path}`).toBe(binary.has(f.path));
    if (diff.binary) continue;
    expect(ourChangedLines(diff.hunks), `${label} ${f.path}`).toEqual(
      await gitChangedLines(cwd, base, b, f.path),
    );
  }
  return ours;
}

describe('diff of features.git commits, against git diff', () => {
  const bare = join(fixturesDir, 'features.git');
  let repoId: string;

  beforeAll(async () => {
    repoId = (await engine.clone({ url: `${serverUrl}/features.git` })).repoId;
  });

  it('lists changes from the trees alone: no request', async () => {
    await resetStats();
    const d = await diffCommits(ctx, repoId, 'v0.1', 'main');
    expect(d.files.length).toBeGreaterThan(3);
    expect((await repoStats('features.git')).requests).toBe(0);
  });

  it('fetches both blobs of a modified file in one request, only when asked', async () => {
    const { files } = await diffCommits(ctx, repoId, 'v0.1', 'v0.2-light');
    expect(files.find((f) => f.path === 'notes/evolving.txt')?.status).toBe('added');
    const change = (await diffCommits(ctx, repoId, 'v0.2-light', 'main')).files.find(
      (f) => f.path === 'notes/evolving.txt',
    )!;
    expect(change.status).toBe('modified');
    await resetStats();
    const diff = await diffFile(ctx, repoId, change.oldOid!, change.newOid!);
    expect((await repoStats('features.git')).requests).toBe(1);
    expect(diff.hunks.length).toBeGreaterThan(0);
    await resetStats();
    await diffFile(ctx, repoId, change.oldOid!, change.newOid!);
    expect((await repoStats('features.git')).requests).toBe(0);
  });

  it.each([
    [null, 'v0.1'],
    ['v0.1', 'v0.2-light'],
    ['v0.2-light', 'main'],
    ['main', 'dev'],
    ['main', 'feature/x'],
    ['dev', 'feature/x'],
    ['feature/x', 'dev'],
    [null, 'main'],
    [null, 'dev'],
    ['v0.1', 'v1.0'],
  ])('%s..%s: paths, statuses and changed lines equal git diff --no-renames', async (a, b) => {
    await checkPair(repoId, bare, a, b);
  });

  it('a root commit compared with its (missing) parent: every file added', async () => {
    const root = (await gitCli(['rev-list', '--max-parents=0', 'main'], { cwd: bare })).trim();
    const d = await checkPair(repoId, bare, null, root);
    expect(d.from).toBeNull();
    expect(d.files.every((f) => f.status === 'added')).toBe(true);
    await maintenanceIdle(ctx, repoId);
  });
});

describe('diff across type changes and file/folder swaps', () => {
  const tmp = useTmpDir('diff');
  let work: string;
  let server: GitServer;
  let repoId: string;

  beforeAll(async () => {
    work = tmp();
    const src = join(work, 'src');
    const run = (args: string[]) =>
      promisify(execFile)('git', args, {
        cwd: src,
        env: {
          ...process.env,
          GIT_AUTHOR_DATE: '2020-01-01T00:00:00Z',
          GIT_COMMITTER_DATE: '2020-01-01T00:00:00Z',
        },
      });
    await mkdir(src);
    await run(['init', '-q', '-b', 'main']);
    await run(['config', 'user.name', 'T']);
    await run(['config', 'user.email', 't@example.com']);
    await writeFile(join(src, 'a'), 'a file\n');
    await writeFile(join(src, 'link'), 'was a file\n');
    await writeFile(join(src, 'tool.sh'), '#!/bin/sh\n');
    await writeFile(join(src, 'no-eol.txt'), 'one\ntwo');
    await mkdir(join(src, 'dir'));
    await writeFile(join(src, 'dir', 'x'), 'x\n');
    await run(['add', '-A']);
    await run([
      'update-index',
      '--add',
      '--cacheinfo',
      '160000,0123456789abcdef0123456789abcdef01234567,sub',
    ]);
    await run(['commit', '-q', '-m', 'one']);
    await run(['rm', '-q', '--cached', 'sub']);
    await writeFile(join(src, 'sub'), 'a submodule no more\n');
    await rm(join(src, 'a'));
    await mkdir(join(src, 'a'));
    await writeFile(join(src, 'a', 'inside'), 'now a folder\n');
    await rm(join(src, 'link'));
    await symlink('a/inside', join(src, 'link'));
    await chmod(join(src, 'tool.sh'), 0o755);
    await writeFile(join(src, 'no-eol.txt'), 'one\ntwo\n');
    await rm(join(src, 'dir'), { recursive: true });
    await writeFile(join(src, 'dir'), 'now a file\n');
    await run(['add', '-A']);
    await run(['commit', '-q', '-m', 'two']);
    await run(['clone', '-q', '--bare', src, join(work, 'serve', 'types.git')]);
    await promisify(execFile)('git', ['config', 'uploadpack.allowFilter', 'true'], {
      cwd: join(work, 'serve', 'types.git'),
    });
    server = await startGitServer({ root: join(work, 'serve') });
    repoId = (await engine.clone({ url: `${server.url}/types.git` })).repoId;
  });

  afterAll(async () => {
    await server?.close();
  });

  it('reports T, M for a mode change, and a folder and a file of one name as two entries, like git', async () => {
    const d = await checkPair(repoId, join(work, 'serve', 'types.git'), null, 'main');
    const byPath = new Map(d.files.map((f) => [f.path, f]));
    expect(byPath.get('link')?.status).toBe('type-changed');
    expect(byPath.get('sub')?.status).toBe('type-changed');
    expect(byPath.get('tool.sh')).toMatchObject({ status: 'modified', oldMode: '100644', newMode: '100755' });
    expect(byPath.get('a')?.status).toBe('deleted');
    expect(byPath.get('a/inside')?.status).toBe('added');
    const eol = await diffFile(
      ctx,
      repoId,
      byPath.get('no-eol.txt')!.oldOid!,
      byPath.get('no-eol.txt')!.newOid!,
    );
    expect(eol.hunks[0].lines).toEqual([
      { kind: ' ', text: 'one' },
      { kind: '-', text: 'two', noNewlineAtEnd: true },
      { kind: '+', text: 'two' },
    ]);
  });
});

describe('lineDiff', () => {
  it('numbers an empty side from 0, as git does', () => {
    expect(lineDiff('', 'a\nb\n').hunks[0]).toMatchObject({
      oldStart: 0,
      oldLines: 0,
      newStart: 1,
      newLines: 2,
    });
    expect(lineDiff('a\n', '').hunks[0]).toMatchObject({
      oldStart: 1,
      oldLines: 1,
      newStart: 0,
      newLines: 0,
    });
    expect(lineDiff('same\n', 'same\n').hunks).toEqual([]);
  });
});
