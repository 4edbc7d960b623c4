import { spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The git CLI, deaf to the user's and the system's configuration (as server/fixtures/lib.sh makes it), so
 * every machine runs the same git. Protocol v2 is named explicitly, though 2.39 defaults to it.
 */
function gitEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('GIT_')) env[name] = value;
  return {
    ...env,
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    LC_ALL: 'C',
  };
}

/** Runs git and returns its wall time in seconds; stderr is a pipe, so git asks for no progress. */
export function timeGit(
  args: string[],
  opts: { cwd?: string; home: string },
): Promise<{ s: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('git', ['-c', 'protocol.version=2', ...args], {
      cwd: opts.cwd,
      env: gitEnv(opts.home),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (t: string) => {
      stdout += t;
    });
    child.stderr.setEncoding('utf8').on('data', (t: string) => {
      stderr = (stderr + t).slice(-4096);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const s = (performance.now() - started) / 1000;
      if (code === 0) resolve({ s, stdout });
      else reject(new Error(`git ${args.join(' ')} exited with ${code}: ${stderr.trim()}`));
    });
  });
}

/** A scratch folder for one contender's run, removed by `dispose`. */
export async function scratch(prefix: string): Promise<{ dir: string; dispose(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, dispose: () => rm(dir, { recursive: true, force: true }) };
}

export interface GitPhases {
  /** Called before each phase, so the relay counts it under its own name. */
  phase(name: 'cloneNoBlobs' | 'checkout' | 'fullClone' | 'noopFetch'): void;
}

export interface GitTimes {
  cloneNoBlobs: number;
  checkout: number;
  fullClone: number;
  noopFetch: number;
}

/**
 * git's own partial-clone perf test (t/perf/p5600-partial-clone.sh): "clone without blobs" is
 * `git clone --bare --filter=blob:none`; "checkout of result" copies that bare repository into
 * `worktree/.git`, sets `core.bare=false` and runs `git checkout -f`, which fetches the blobs of HEAD from
 * the promisor remote in one batch. p5600 times the copy as well; here only the checkout is timed, since
 * Blobless has nothing to copy. Then a full clone with checkout, what isomorphic-git's clone does.
 */
export async function measureGitCli(url: string, phases: GitPhases): Promise<GitTimes> {
  const work = await scratch('blobless-bench-git-');
  try {
    const home = join(work.dir, 'home');
    await mkdir(home);
    const bare = join(work.dir, 'bare.git');
    phases.phase('cloneNoBlobs');
    const clone = await timeGit(['clone', '--bare', '--filter=blob:none', url, bare], { home });

    const worktree = join(work.dir, 'worktree');
    await cp(bare, join(worktree, '.git'), { recursive: true });
    await timeGit(['-C', worktree, 'config', 'core.bare', 'false'], { home });
    phases.phase('checkout');
    const checkout = await timeGit(['-C', worktree, 'checkout', '-f'], { home });

    phases.phase('fullClone');
    const full = await timeGit(['clone', url, join(work.dir, 'full')], { home });

    // Nothing moved: what checking the branches costs git. --no-tags, since its default lists every tag.
    phases.phase('noopFetch');
    const noop = await timeGit(['-C', join(work.dir, 'full'), 'fetch', '--no-tags', 'origin'], { home });
    return { cloneNoBlobs: clone.s, checkout: checkout.s, fullClone: full.s, noopFetch: noop.s };
  } finally {
    await work.dispose();
  }
}

export interface GitHistoryPhases {
  /** Called before each phase, so the relay counts it under its own name. */
  phase(name: 'historyClone' | 'logFollow' | 'commitGraphWrite' | 'logFollowChangedPaths' | 'blame'): void;
}

export interface GitHistoryTimes {
  /** `git log --follow --format=%H -- <file>`: the whole history, then its first page (`-n <page>`). */
  logFollow: number;
  logFollowFirstPage: number;
  /** `git commit-graph write --reachable --changed-paths`, and the file it wrote, in bytes. */
  commitGraphWrite: number;
  commitGraphBytes: number;
  /** The same two logs again, now that the graph and its Bloom filters are there. */
  logFollowChangedPaths: number;
  logFollowFirstPageChangedPaths: number;
  /** Commits `git log --follow` listed. */
  followCommits: number;
  /** `git blame --porcelain HEAD -- <file>` in that blob:none clone: each old version a request of its own. */
  blame: number;
  blameLines: number;
}

/**
 * The git CLI's side of the history cells, in one blob:none bare clone: `git log --follow` without a
 * commit-graph (a clone writes none: fetch.writeCommitGraph is off by default), `git commit-graph write
 * --reachable --changed-paths`, `git log --follow` again with it, and `git blame`, which fetches each old
 * version's blob from the promisor remote as it reaches it, one request each (and uses the graph too).
 */
export async function measureGitHistory(
  url: string,
  file: string,
  page: number,
  phases: GitHistoryPhases,
): Promise<GitHistoryTimes> {
  const work = await scratch('blobless-bench-git-history-');
  try {
    const home = join(work.dir, 'home');
    await mkdir(home);
    const bare = join(work.dir, 'bare.git');
    phases.phase('historyClone');
    await timeGit(['clone', '--bare', '--filter=blob:none', url, bare], { home });
    const follow = (n?: number) =>
      timeGit(
        ['-C', bare, 'log', '--follow', '--format=%H', ...(n ? ['-n', String(n)] : []), 'HEAD', '--', file],
        {
          home,
        },
      );
    phases.phase('logFollow');
    const whole = await follow();
    const firstPage = await follow(page);
    phases.phase('commitGraphWrite');
    const write = await timeGit(['-C', bare, 'commit-graph', 'write', '--reachable', '--changed-paths'], {
      home,
    });
    const graphBytes = (await stat(join(bare, 'objects/info/commit-graph'))).size;
    phases.phase('logFollowChangedPaths');
    const wholeWithGraph = await follow();
    const firstPageWithGraph = await follow(page);
    if (wholeWithGraph.stdout !== whole.stdout) {
      throw new Error(`git log --follow -- ${file} listed other commits once the commit-graph was written.`);
    }
    phases.phase('blame');
    const blame = await timeGit(['-C', bare, 'blame', '--porcelain', 'HEAD', '--', file], { home });
    return {
      logFollow: whole.s,
      logFollowFirstPage: firstPage.s,
      commitGraphWrite: write.s,
      commitGraphBytes: graphBytes,
      logFollowChangedPaths: wholeWithGraph.s,
      logFollowFirstPageChangedPaths: firstPageWithGraph.s,
      followCommits: whole.stdout.split('\n').filter(Boolean).length,
      blame: blame.s,
      blameLines: blame.stdout.split('\n').filter((l) => l.startsWith('\t')).length,
    };
  } finally {
    await work.dispose();
  }
}

/**
 * The file openOneFile reads: a README at the root if there is one, else the first path of HEAD's tree in
 * git's order; and the file of HEAD that the most commits changed, which the history cells read (blame's
 * requests per version mean something only on a file with many versions). Found from a blob-less bare
 * clone (names only, so no blob is fetched).
 */
export async function pickFile(
  url: string,
): Promise<{ path: string; files: number; busiest: { path: string; commits: number } }> {
  const work = await scratch('blobless-bench-pick-');
  try {
    const home = join(work.dir, 'home');
    await mkdir(home);
    const bare = join(work.dir, 'bare.git');
    await timeGit(['clone', '--bare', '--filter=blob:none', url, bare], { home });
    const { stdout } = await timeGit(['-C', bare, 'ls-tree', '-r', '--name-only', '-z', 'HEAD'], { home });
    const paths = stdout.split('\0').filter((p) => p !== '');
    if (paths.length === 0) throw new Error(`${url} has no files at HEAD to open.`);
    const readme = paths.find((p) => /^readme(\.[a-z]+)?$/i.test(p));
    const atHead = new Set(paths);
    const changes = new Map<string, number>();
    // --no-renames: rename detection would compare removed and added files' contents, fetching their blobs
    // one lazy fetch at a time, and the maintenance those fetches start in the background was still writing
    // in the folder when it was removed (ENOTEMPTY on real.git).
    const log = await timeGit(['-C', bare, 'log', '--format=', '--name-only', '--no-renames', '-z', 'HEAD'], {
      home,
    });
    for (const p of log.stdout.split(/[\0\n]/)) {
      if (atHead.has(p)) changes.set(p, (changes.get(p) ?? 0) + 1);
    }
    // Ties go to the first in git's order, so every run picks the same file.
    let busiest = { path: paths[0], commits: 0 };
    for (const p of paths) {
      const n = changes.get(p) ?? 0;
      if (n > busiest.commits) busiest = { path: p, commits: n };
    }
    return { path: readme ?? paths[0], files: paths.length, busiest };
  } finally {
    await work.dispose();
  }
}
