// Blame against `git blame --porcelain` on a few files of blame.git chosen for the cases blame.ts handles
// apart (a rename on a branch merged back, a file moved twice, a copy, an evil merge, a criss-cross, an
// octopus, a mode change, a file that was empty, a rename git does not pair, a file deleted and added again), from the commit-graph's
// Bloom filters and from commit objects alone. historyOracle.test.ts blames every file, in some 16 s: this
// is the cheap subset mutation testing runs per mutant of blame.ts (README, "Mutation testing"). No git
// server: real `git upload-pack` answers through a scripted fetch (uploadPackFetch), the repos are kept in
// memory, and the scratch history is built once per machine (cachedScratchRepo), so a mutant costs seconds.
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { BlameProgress } from '../workers/engine/index.ts';
import { COMMIT_GRAPH_CHAIN, layerPath } from '../workers/ops/common/commitGraphAccess.ts';
import { maintenanceIdle } from '../workers/ops/maintenance/packMaintenance.ts';
import { BLAME_FIRST_GENERATION, BLAME_REPORT_MS } from '../workers/ops/read/blame.ts';
import { memoryStorage } from '../workers/storage/memory.ts';
import { testEngine } from './support/engine.ts';
import { gitBlame, gitBytes, runGit } from './support/gitHistory.ts';
import { cachedScratchRepo } from './support/scratchServer.ts';
import { useTmpDir } from './support/tmpDir.ts';
import { uploadPackFetch } from './support/uploadPackFetch.ts';

// The fixtures of the global setup; a mutation run without the git server names them (stryker.config.mjs).
const fixturesDir = inject('fixturesDir') ?? process.env.BLOBLESS_FIXTURES_DIR;
const bare = join(fixturesDir, 'blame.git');
/** The scratch histories' bare repo, once built (the second describe). */
let scratchBare = '';
const served = uploadPackFetch((name) => (name === 'blame.git' ? bare : scratchBare));
const serverUrl = served.base;
/** While set, a blob request is called on it and then hangs until its signal fires. */
let onBlobRequest: (() => void) | undefined;
const { engine, ctx } = testEngine({
  storage: memoryStorage(),
  fetch: (input, init) => {
    const hang = onBlobRequest;
    if (!hang || init?.method !== 'POST') return served.fetch(input, init);
    return new Promise((_, reject) => {
      init.signal?.addEventListener('abort', () => reject(init.signal?.reason), { once: true });
      hang();
    });
  },
});
const scratch = useTmpDir('blame-cases');

const CASES = [
  'src/core/router.js',
  'lib/text/format.js',
  'src/api/adminClient.js',
  'src/api/retry.js',
  'src/store/cache.js',
  'native/hash.c',
  'scripts/deploy.sh',
  'src/empty.js',
  'src/util/time.js',
  'src/legacy.js',
];

/** The files the run without a commit-graph blames: the merges and renames, where it walks otherwise. */
const WITHOUT_GRAPH = ['src/core/router.js', 'lib/text/format.js', 'src/store/cache.js', 'native/hash.c'];

let repoId: string;
/** git's blame and content of each case, asked for at once while the clone runs. */
const oracle = new Map<string, { lines: string[]; text: string }>();
beforeAll(async () => {
  const answers = Promise.all(
    CASES.map(async (path) => {
      const [lines, text] = await Promise.all([
        gitBlame(bare, 'main', path),
        gitBytes(bare, ['show', `main:${path}`]),
      ]);
      oracle.set(path, { lines, text: text.toString() });
    }),
  );
  repoId = (await engine.clone({ url: `${serverUrl}/blame.git` })).repoId;
  await maintenanceIdle(ctx, repoId);
  await answers;
}, 60_000);

async function blameEqualsGit(path: string) {
  const result = await engine.repo(repoId).blame({ ref: 'main', path });
  const ours = result.lines.map((l) => `${l.commit} ${l.origLine} ${l.origPath}`);
  const expected = oracle.get(path)!;
  expect({ path, lines: ours }).toEqual({ path, lines: expected.lines });
  expect(result.lines.map((l) => `${l.text}\n`).join('')).toBe(expected.text);
}

describe('blame of chosen files of blame.git against git blame --porcelain', () => {
  it('from the Bloom filters of the commit-graph', async () => {
    expect(await ctx.store.repoFs.open(repoId).promises.stat(COMMIT_GRAPH_CHAIN)).toBeTruthy();
    for (const path of CASES) await blameEqualsGit(path);
  });

  it('from commit objects, without a commit-graph', async () => {
    await ctx.store.repoFs
      .open(repoId)
      .promises.unlink(COMMIT_GRAPH_CHAIN)
      .catch(() => {});
    for (const path of WITHOUT_GRAPH) await blameEqualsGit(path);
  });

  it('names each commit of its lines with its parents and message, as git log does', async () => {
    const path = 'src/core/router.js';
    const result = await engine.repo(repoId).blame({ ref: 'main', path: `//${path}//` });
    expect(result.path).toBe(path);
    expect(result.commit).toBe((await gitBytes(bare, ['rev-parse', 'main'])).toString().trim());
    const named = [...new Set(result.lines.map((l) => l.commit))].sort();
    expect(Object.keys(result.commits).sort()).toEqual(named);
    for (const oid of named) {
      const [parents, message] = (await gitBytes(bare, ['log', '-1', '--format=%P%x00%B', oid]))
        .toString()
        .split('\0');
      expect(result.commits[oid]).toMatchObject({ oid, parents: parents.split(' ').filter(Boolean) });
      expect(result.commits[oid].message.trim()).toBe(message.trim());
    }
  });

  it('reports every line once, as the result attributes it, its commit named by then', async () => {
    const reports: BlameProgress[] = [];
    const result = await engine
      .repo(repoId)
      .blame(
        { ref: 'main', path: 'src/api/retry.js' },
        { onProgress: (p) => reports.push(structuredClone(p)) },
      );
    expect(reports.filter((r) => 'fileLines' in r)).toHaveLength(1);
    expect(reports.find((r) => r.fileLines)!.fileLines).toEqual(result.lines.map((l) => l.text));
    const shown: string[] = [];
    const named = new Map<string, unknown>();
    // Reports sent while the file's own content was being fetched know no lines yet.
    let read = false;
    for (const r of reports) {
      read ||= r.fileLines !== undefined;
      expect(r.totalLines).toBe(read ? result.lines.length : 0);
      for (const [oid, c] of Object.entries(r.commits ?? {})) {
        expect(named.has(oid)).toBe(false);
        named.set(oid, c);
      }
      for (const f of r.found ?? []) {
        expect(shown[f.line]).toBeUndefined();
        expect(named.has(f.commit)).toBe(true);
        shown[f.line] = `${f.commit} ${f.origLine} ${f.origPath}`;
      }
      expect(r.linesDone).toBe(shown.filter(Boolean).length);
    }
    expect(shown).toEqual(result.lines.map((l) => `${l.commit} ${l.origLine} ${l.origPath}`));
    // Named as lines are attributed, and only commits some line names.
    expect(Object.fromEntries(named)).toEqual(result.commits);
    expect(Object.keys(result.commits).sort()).toEqual(
      [...new Set(result.lines.map((l) => l.commit))].sort(),
    );
    expect(reports.at(-1)).toMatchObject({
      phase: 'blame',
      linesDone: result.lines.length,
      requests: result.requests,
      versionsFetched: result.versionsFetched,
    });
  });

  it('stops with ABORTED when cancelled', async () => {
    const controller = new AbortController();
    const err = await engine
      .repo(repoId)
      .blame(
        { ref: 'main', path: 'src/store/cache.js' },
        { onProgress: () => controller.abort(), signal: controller.signal },
      )
      .catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'ABORTED' });
  });

  it('stops a blob request that hangs when cancelled', async () => {
    const controller = new AbortController();
    onBlobRequest = () => controller.abort();
    try {
      // A file no case above blamed: its blobs are not stored yet.
      const err = await engine
        .repo(repoId)
        .blame({ ref: 'main', path: 'src/parser/lexer.js' }, { signal: controller.signal })
        .catch((e: Error) => e);
      expect(err).toMatchObject({ code: 'ABORTED' });
    } finally {
      onBlobRequest = undefined;
    }
  }, 30_000);

  it('ends at the shallow boundary of a clone with depth, as git blame does with the same shallow file', async () => {
    const { repoId: shallowId } = await engine.clone({ url: `${serverUrl}/blame.git`, depth: 12 });
    await maintenanceIdle(ctx, shallowId);
    const fs = ctx.store.repoFs.open(shallowId).promises;
    const shallowFile = join(scratch(), 'shallow');
    await writeFile(shallowFile, (await fs.readFile('/.git/shallow', 'utf8')) as string);
    for (const path of ['src/core/router.js', 'src/store/cache.js']) {
      const result = await engine.repo(shallowId).blame({ ref: 'main', path });
      const ours = result.lines.map((l) => `${l.commit} ${l.origLine} ${l.origPath}`);
      const theirs = await gitBlame(bare, 'main', path, ['--shallow-file', shallowFile]);
      expect(new Set(ours).size).toBeGreaterThan(1);
      expect({ path, lines: ours }).toEqual({ path, lines: theirs });
    }
  });

  it.each([
    ['a folder', 'src/core'],
    ['a missing path', 'src/nope.js'],
  ])('refuses %s with PATH_NOT_FOUND', async (_, path) => {
    const err = await engine
      .repo(repoId)
      .blame({ ref: 'main', path })
      .catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'PATH_NOT_FOUND' });
    expect((err as Error).message).toContain(`"${path}"`);
  });
});

/**
 * Histories blame.git has none of, built here with git and blamed by git: a merge whose other parent lacks
 * the file (renamed there from a file its base also held, or never there), a parent dated after its child
 * (walked before a child that gives it more lines), a file that becomes a symlink and one that stops being
 * one (also as the same blob), and a merge where a file of the first parent and a renamed one of the other
 * are the same blob, or a renamed one of the first and a file of the other; a commit that keeps lines
 * twice, its progress reports under a clock the test moves; a commit outside the commit-graph; and a file
 * of more versions than a page of its history, whose blobs come in generations that double.
 */
describe('blame of merges, dates and kinds blame.git lacks, against git blame --porcelain', () => {
  const FILES = [
    'lacks/f.js',
    'none/n.js',
    'skew/f.js',
    'skew/h.js',
    'link/a',
    'link/b',
    'link/c',
    'link/d',
    'order/f.js',
    'dup/f.js',
    'twice/f.js',
    'plain/empty.js',
    'plain/tail.txt',
  ];
  /** More than the 200 entries of one page of fileHistory. */
  const MANY = 210;
  /** Versions of main after the side branch's: more than the first two generations (16 + 32). */
  const JUMP = 50;
  let id: string;

  beforeAll(async () => {
    // Kept under a name of this script's text: what it uses is inside it (MANY and JUMP are in the name).
    scratchBare = await cachedScratchRepo(`blame-cases-${MANY}-${JUMP}`, async (run, work) => {
      let clock = 1_700_000_000;
      const body = (name: string, n: number) =>
        Array.from({ length: n }, (_, i) => `${name} line ${i + 1}: ${'abcdefghij'.repeat(3)}\n`).join('');
      const put = async (path: string, text: string) => {
        // Not through a symlink that was there.
        await rm(join(work, path), { force: true });
        await mkdir(dirname(join(work, path)), { recursive: true });
        await writeFile(join(work, path), text);
      };
      const link = async (path: string, target: string) => {
        await put(path, '');
        await rm(join(work, path));
        await symlink(target, join(work, path));
      };
      const dated = (at?: number) => {
        clock += 60;
        const time = at ?? clock;
        return { GIT_AUTHOR_DATE: `${time} +0000`, GIT_COMMITTER_DATE: `${time} +0000` };
      };
      const commit = async (message: string, time?: number) => {
        await run(['add', '-A']);
        await run(['commit', '-q', '-m', message], dated(time));
      };
      // The merge's tree is the first parent's (-s ours) with `edit` on top: no conflict to settle.
      const merge = async (branch: string, edit: () => Promise<void>, time?: number) => {
        await run(['merge', '-q', '--no-ff', '--no-commit', '-s', 'ours', branch], dated(time));
        await edit();
        await commit(`merge ${branch}`, time);
      };

      // lacks: the other parent deleted f.js, and f.js takes g.js's lines in the merge: the base is reached
      // with both paths.
      const f = body('f', 6);
      const g = body('g', 10);
      await put('lacks/f.js', f);
      await put('lacks/g.js', g);
      await commit('lacks: f and g');
      await run(['switch', '-q', '-c', 'lacks']);
      await run(['rm', '-q', 'lacks/f.js']);
      await commit('lacks: drop f');
      await run(['switch', '-q', 'main']);
      await put('lacks/f.js', f.replace('f line 6', 'f line six'));
      await commit('lacks: edit f');
      await merge('lacks', async () => {
        await put('lacks/f.js', `${g}${f.split('\n').slice(0, 3).join('\n')}\nf line six\n`);
        await run(['rm', '-q', 'lacks/g.js']);
      });

      // none: the other parent never had n.js, and the merge adds a line of its own.
      await run(['switch', '-q', '-c', 'none']);
      await put('none/other.txt', 'other\n');
      await commit('none: other');
      await run(['switch', '-q', 'main']);
      await put('none/n.js', body('n', 5));
      await commit('none: n');
      await merge('none', () => put('none/n.js', `${body('n', 5)}merged line\n`));

      // skew: p is dated after both its children, so the walk takes it before c2 gives it lines: c1's
      // line 2, which the merge does not keep, is c2's and so p's, after p passed its other lines on (for
      // f.js, which p left alone, in one run of passDownRun down to pp).
      const base = clock + 600;
      clock = base + 3000;
      await put('skew/f.js', body('sf', 8));
      await put('skew/h.js', body('sh', 8));
      await commit('skew: pp', base);
      await put('skew/h.js', body('sh', 8).replace('sh line 4', 'sh line four'));
      await commit('skew: p, dated late', base + 1000);
      await run(['switch', '-q', '-c', 'skew']);
      await put('skew/f.js', body('sf', 8).replace('sf line 8', 'sf line eight'));
      await put(
        'skew/h.js',
        body('sh', 8).replace('sh line 4', 'sh line four').replace('sh line 8', 'sh line eight'),
      );
      await commit('skew: c2', base + 100);
      await run(['switch', '-q', 'main']);
      await put(
        'skew/f.js',
        body('sf', 8).replace('sf line 1', 'sf line one').replace('sf line 2', 'sf line two'),
      );
      await put(
        'skew/h.js',
        body('sh', 8)
          .replace('sh line 4', 'sh line four')
          .replace('sh line 1', 'sh line one')
          .replace('sh line 2', 'sh line two'),
      );
      await commit('skew: c1', base + 500);
      await merge(
        'skew',
        async () => {
          await put(
            'skew/f.js',
            body('sf', 8).replace('sf line 1', 'sf line one').replace('sf line 8', 'sf line eight'),
          );
          await put(
            'skew/h.js',
            body('sh', 8)
              .replace('sh line 4', 'sh line four')
              .replace('sh line 1', 'sh line one')
              .replace('sh line 8', 'sh line eight'),
          );
        },
        base + 2000,
      );

      // link: a becomes a symlink to its first line; b, a symlink, becomes a file starting with its target.
      await put('link/a', 'some/where\nsecond\n');
      await link('link/b', 'else/where');
      await commit('link: a file, b symlink');
      await link('link/a', 'some/where');
      await put('link/b', 'else/where\nsecond\n');
      await commit('link: a symlink, b file');
      // c, a file of its target's bytes (no line feed), becomes that symlink: the same blob, another kind
      // (a and b differ from their targets by a line feed, so their lines change anyway); d, a symlink,
      // becomes a file of the same blob.
      await put('link/c', 'some/where');
      await link('link/d', 'else/where');
      await commit('link: c file, d symlink');
      await link('link/c', 'some/where');
      await put('link/d', 'else/where');
      await commit('link: c symlink, d file, the same blobs');

      // order: the first parent added f.js, the other g.js with the same bytes, which the merge drops.
      await run(['switch', '-q', '-c', 'order']);
      await put('order/g.js', body('o', 4));
      await commit('order: g');
      await run(['switch', '-q', 'main']);
      await put('order/f.js', body('o', 4));
      await commit('order: f');
      await merge('order', async () => {});

      // dup: the first parent renamed f.js to x.js, the other has f.js, both with the blob of an edit each
      // side made alike; the merge keeps f.js with a line more. The first parent's rename, found in the
      // second pass, still goes before the other parent's same blob (pass_blame's j < i): s1's edit, not s2's.
      await put('dup/f.js', body('d', 8));
      await commit('dup: base');
      await run(['switch', '-q', '-c', 'dup']);
      await put('dup/f.js', body('d', 8).replace('d line 3', 'd line three'));
      await commit('dup: s2 edits line 3');
      await run(['switch', '-q', 'main']);
      await put('dup/f.js', body('d', 8).replace('d line 3', 'd line three'));
      await commit('dup: s1 edits line 3 alike');
      await run(['mv', 'dup/f.js', 'dup/x.js']);
      await commit('dup: rename f.js to x.js');
      await merge('dup', async () => {
        await run(['rm', '-q', 'dup/x.js']);
        await put('dup/f.js', `${body('d', 8).replace('d line 3', 'd line three')}merged line\n`);
      });

      // twice: p, dated after its children, keeps line 4 from c1 and, once c2 is walked, line 6 from c2:
      // two passes of one commit, with reports between them when time has passed.
      const t0 = clock + 600;
      clock = t0 + 3000;
      await put('twice/f.js', body('t', 8));
      await commit('twice: pp', t0);
      const tp = body('t', 8).replace('t line 4', 't line four').replace('t line 6', 't line six');
      await put('twice/f.js', tp);
      await commit('twice: p, dated late', t0 + 1000);
      await run(['switch', '-q', '-c', 'twice']);
      await put('twice/f.js', tp.replace('t line 8', 't line eight'));
      await commit('twice: c2', t0 + 100);
      await run(['switch', '-q', 'main']);
      await put('twice/f.js', tp.replace('t line six', 't line six in c1'));
      await commit('twice: c1', t0 + 500);
      await merge(
        'twice',
        () => put('twice/f.js', `${tp.replace('t line 8', 't line eight')}merged\n`),
        t0 + 2000,
      );

      // plain: a file emptied, one without a final line feed, and a submodule, which blame refuses.
      await put('plain/empty.js', body('e', 3));
      await put('plain/tail.txt', 'one\ntwo');
      await commit('plain: two files');
      await put('plain/empty.js', '');
      await put('plain/tail.txt', 'one\ntwo\nthree');
      // Staged by hand: `add -A` would drop a gitlink without its folder.
      await run(['add', '-A']);
      const head = (await run(['rev-parse', 'HEAD'])).trim();
      await run(['update-index', '--add', '--cacheinfo', `160000,${head},plain/sub`]);
      await run(['commit', '-q', '-m', 'plain: emptied, a line more, a submodule'], dated());

      // many: a branch of its own whose every commit adds a line to v.txt, in one fast-import.
      let stream = '';
      const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
      let text = '';
      for (let n = 1; n <= MANY; n++) {
        text += `version ${n} of v.txt\n`;
        clock += 60;
        stream += `commit refs/heads/many\nmark :${n}\ncommitter Ada Fixture <ada@fixtures.blobless.test> ${clock} +0000\n`;
        stream += `${data(`many: ${n}`)}${n > 1 ? `from :${n - 1}\n` : ''}M 100644 inline many/v.txt\n${data(text)}`;
      }
      await runGit(['fast-import', '--quiet'], { cwd: work, input: stream });

      // jump: a side branch's version, dated before the JUMP versions of main that follow it, is merged
      // back with a line of the merge's own: far down the list of versions when the merge asks for it.
      const jumpLines = Array.from({ length: JUMP + 10 }, (_, i) => `j line ${i + 1}`);
      const jumpText = (edited: (i: number) => boolean, merged = false) =>
        `${jumpLines.map((l, i) => (edited(i) ? `${l} edited` : l)).join('\n')}\n${merged ? 'merged\n' : ''}`;
      const jumpCommit = (mark: number, ref: string, from: number, text: string, merge?: number) => {
        clock += 60;
        return `commit refs/heads/${ref}\nmark :${mark}\ncommitter Ada Fixture <ada@fixtures.blobless.test> ${clock} +0000\n${data(`${ref}: ${mark}`)}${from ? `from :${from}\n` : ''}${merge ? `merge :${merge}\n` : ''}M 100644 inline jump/j.txt\n${data(text)}`;
      };
      const side = (i: number) => i === JUMP + 5;
      stream = jumpCommit(
        1,
        'jump',
        0,
        jumpText(() => false),
      );
      stream += jumpCommit(2, 'jump-side', 1, jumpText(side));
      for (let n = 1; n <= JUMP; n++)
        stream += jumpCommit(
          n + 2,
          'jump',
          n + 1,
          jumpText((i) => i < n),
        );
      stream += jumpCommit(
        JUMP + 3,
        'jump',
        JUMP + 2,
        jumpText((i) => i < JUMP || side(i), true),
        2,
      );
      await runGit(['fast-import', '--quiet'], { cwd: work, input: stream });
    });
    id = (await engine.clone({ url: `${serverUrl}/repo.git` })).repoId;
    await maintenanceIdle(ctx, id);
  }, 120_000);

  it('fetches a file of many versions in generations that double, reporting found lines before each request', async () => {
    const reports: BlameProgress[] = [];
    const result = await engine
      .repo(id)
      .blame({ ref: 'many', path: 'many/v.txt' }, { onProgress: (p) => reports.push(structuredClone(p)) });
    const ours = result.lines.map((l) => `${l.commit} ${l.origLine} ${l.origPath}`);
    expect(ours).toEqual(await gitBlame(scratchBare, 'many', 'many/v.txt'));
    // Every version is read (each commit added a line), none of them cloned: 16, 32, 64, ... in a request each.
    let generations = 0;
    for (let sum = 0, size = BLAME_FIRST_GENERATION; sum < MANY; sum += size, size *= 2) generations++;
    expect(result).toMatchObject({ versionsFetched: MANY, requests: generations });
    // A request's report comes after it, and the lines found before it went out in the report before.
    let before = reports[0];
    let foundBeforeRequest = 0;
    for (const r of reports.slice(1)) {
      if (r.requests > before.requests) {
        expect(r.found).toBeUndefined();
        if (before.found) foundBeforeRequest++;
      }
      before = r;
    }
    expect(foundBeforeRequest).toBe(generations - 1);
  });

  it('fetches a version far down the list, a side branch merged back, with the batch it starts', async () => {
    const result = await engine.repo(id).blame({ ref: 'jump', path: 'jump/j.txt' });
    const ours = result.lines.map((l) => `${l.commit} ${l.origLine} ${l.origPath}`);
    const theirs = await gitBlame(scratchBare, 'jump', 'jump/j.txt');
    expect(ours).toEqual(theirs);
    // The side branch's line is its commit's, read past the first two generations of versions.
    expect(new Set(theirs.map((l) => l.split(' ')[0])).size).toBe(JUMP + 3);
  });

  async function scratchEqualsGit(path: string) {
    const result = await engine.repo(id).blame({ ref: 'main', path }, { onProgress: () => {} });
    const ours = result.lines.map((l) => `${l.commit} ${l.origLine} ${l.origPath}`);
    expect({ path, lines: ours }).toEqual({ path, lines: await gitBlame(scratchBare, 'main', path) });
    // With a listener too, only the commits some line names are named.
    expect(Object.keys(result.commits).sort()).toEqual(
      [...new Set(result.lines.map((l) => l.commit))].sort(),
    );
  }

  it('from the Bloom filters of the commit-graph', async () => {
    expect(await ctx.store.repoFs.open(id).promises.stat(COMMIT_GRAPH_CHAIN)).toBeTruthy();
    for (const path of FILES) await scratchEqualsGit(path);
  });

  /**
   * Blames twice/f.js with performance.now() held at a clock only the listener moves, by `step` after each
   * report: whether a report goes out depends on the clock, not on how fast this machine is.
   */
  async function twiceReports(step: number) {
    let now = 1_000_000;
    const reports: BlameProgress[] = [];
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => now);
    try {
      const result = await engine.repo(id).blame(
        { ref: 'main', path: 'twice/f.js' },
        {
          onProgress: (p) => {
            reports.push(structuredClone(p));
            now += step;
          },
        },
      );
      const ours = result.lines.map((l) => `${l.commit} ${l.origLine} ${l.origPath}`);
      expect(ours).toEqual(await gitBlame(scratchBare, 'main', 'twice/f.js'));
      // Each commit is named once, in the first report with its lines, though p keeps lines twice.
      const named = new Set<string>();
      for (const r of reports) {
        for (const oid of Object.keys(r.commits ?? {})) {
          expect(named.has(oid)).toBe(false);
          named.add(oid);
        }
        for (const f of r.found ?? []) expect(named.has(f.commit)).toBe(true);
      }
      return reports.filter((r) => r.found).map((r) => [...new Set(r.found!.map((f) => f.commit))]);
    } finally {
      clock.mockRestore();
    }
  }

  it('reports the lines a commit keeps as soon as BLAME_REPORT_MS have passed since the last report', async () => {
    // git blame --incremental tells each commit's lines as the walk gives them: the same steps.
    const steps: string[][] = [];
    for (const line of (await gitBytes(scratchBare, ['blame', '--incremental', 'main', '--', 'twice/f.js']))
      .toString()
      .split('\n')) {
      const oid = /^([0-9a-f]{40}) /.exec(line)?.[1];
      if (oid && steps.at(-1)?.[0] !== oid) steps.push([oid]);
    }
    expect(steps).toHaveLength(5);
    expect(await twiceReports(BLAME_REPORT_MS)).toEqual(steps);
  });

  it('holds found lines for the last report while less than BLAME_REPORT_MS has passed', async () => {
    // Every version was fetched with the file's own content: no request comes to send them out earlier,
    // nor a fetch of nothing where pp's parent, which lacks the file, is searched for a rename to it.
    expect(await twiceReports(0)).toHaveLength(1);
  });

  it('refuses a submodule with PATH_NOT_FOUND', async () => {
    expect((await gitBytes(scratchBare, ['ls-tree', 'main', 'plain/sub'])).toString()).toContain(
      '160000 commit',
    );
    const err = await engine
      .repo(id)
      .blame({ ref: 'main', path: 'plain/sub' })
      .catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'PATH_NOT_FOUND' });
  });

  it('from a commit the commit-graph lacks, its parents in the graph git writes for them', async () => {
    // git's own graph of main's parent's history (with its Bloom filters) in place of ours: main, which
    // changed plain/, is outside it.
    const objects = join(scratch(), 'graph-objects');
    await mkdir(join(objects, 'info'), { recursive: true });
    const [tip, parent] = (await gitBytes(scratchBare, ['rev-parse', 'main', 'main~1']))
      .toString()
      .split('\n');
    await runGit(
      ['--git-dir', scratchBare, 'commit-graph', 'write', '--split', '--changed-paths', '--stdin-commits'],
      {
        input: `${parent}\n`,
        env: {
          ...process.env,
          GIT_OBJECT_DIRECTORY: objects,
          GIT_ALTERNATE_OBJECT_DIRECTORIES: join(scratchBare, 'objects'),
        },
      },
    );
    const written = join(objects, 'info', 'commit-graphs');
    const chain = await readFile(join(written, 'commit-graph-chain'), 'utf8');
    const fs = ctx.store.repoFs.open(id).promises;
    for (const hash of chain.split('\n').filter(Boolean)) {
      const layer = await readFile(join(written, `graph-${hash}.graph`));
      expect(layer.includes(Buffer.from(parent, 'hex'))).toBe(true);
      expect(layer.includes(Buffer.from(tip, 'hex'))).toBe(false);
      await fs.writeFile(layerPath(hash), layer);
    }
    await fs.writeFile(COMMIT_GRAPH_CHAIN, chain, 'utf8');
    for (const path of ['plain/tail.txt', 'lacks/f.js']) await scratchEqualsGit(path);
  });

  it('from commit objects, without a commit-graph', async () => {
    await ctx.store.repoFs
      .open(id)
      .promises.unlink(COMMIT_GRAPH_CHAIN)
      .catch(() => {});
    for (const path of FILES) await scratchEqualsGit(path);
  });
});
