// A repository's history as the git CLI reports it, read in a few processes for the whole history (not one
// per commit), for oracle tests that check something on every commit.
import { spawn } from 'node:child_process';

export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

export interface RunGitOptions {
  cwd?: string;
  /** Written to git's stdin. */
  input?: string | Uint8Array;
  env?: NodeJS.ProcessEnv;
  /** Exit codes that mean success besides 0 (`git diff --no-index` exits 1 when the files differ). */
  okCodes?: number[];
}

/** Runs git and returns stdout's bytes; another exit code than 0 (or `okCodes`) rejects with stderr. */
export function runGit(args: string[], opts: RunGitOptions = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    child.on('error', reject);
    // A command that does not read its input may exit before taking it.
    child.stdin.on('error', () => {});
    child.on('close', (code) =>
      code === 0 || opts.okCodes?.includes(code ?? -1)
        ? resolve(Buffer.concat(out))
        : reject(new Error(`git ${args.join(' ')}: ${code}\n${err}`)),
    );
    child.stdin.end(opts.input ?? '');
  });
}

/** Runs git on `gitDir` with `input` on stdin and returns stdout's bytes. */
export function gitBytes(gitDir: string, args: string[], input: string | Uint8Array = ''): Promise<Buffer> {
  return runGit(['--git-dir', gitDir, ...args], { input });
}

/**
 * `git blame --porcelain` of `path` at `ref`, as "commit origLine origPath" per final line; `options` go
 * before the command (`--shallow-file <file>`: git's own option for a shallow file other than its own).
 */
export async function gitBlame(
  gitDir: string,
  ref: string,
  path: string,
  options: string[] = [],
): Promise<string[]> {
  const out = (
    await runGit([...options, '--git-dir', gitDir, 'blame', '--porcelain', ref, '--', path])
  ).toString();
  const lines: string[] = [];
  const pathOf = new Map<string, string>();
  let head: RegExpExecArray | null = null;
  for (const line of out.split('\n')) {
    const m = /^([0-9a-f]{40}) (\d+) (\d+)/.exec(line);
    if (m) head = m;
    // "filename" follows a group's header the first time its commit shows up (or for every group of a
    // commit seen under two paths), so the last one seen for a commit is the group's.
    else if (line.startsWith('filename ') && head) pathOf.set(head[1], line.slice(9));
    else if (line.startsWith('\t') && head)
      lines[Number(head[3]) - 1] = `${head[1]} ${head[2]} ${pathOf.get(head[1])}`;
  }
  return lines;
}

/**
 * The NUL-separated fields of `diff-tree --stdin -z` output, grouped under the commit id that starts each
 * commit's part.
 */
export function fieldsByCommit(out: string): Map<string, string[]> {
  const byCommit = new Map<string, string[]>();
  let current: string[] = [];
  for (const field of out.split('\0')) {
    if (/^[0-9a-f]{40}$/.test(field)) {
      current = [];
      byCommit.set(field, current);
    } else if (field) {
      current.push(field);
    }
  }
  return byCommit;
}

export interface HistoryCommit {
  oid: string;
  parents: string[];
}

/** Every commit reachable from any ref, newest first (`git rev-list --all --parents`). */
export async function allCommits(gitDir: string): Promise<HistoryCommit[]> {
  const out = (await gitBytes(gitDir, ['rev-list', '--all', '--parents'])).toString();
  return out
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [oid, ...parents] = line.split(' ');
      return { oid, parents };
    });
}

export interface RawChange {
  status: string;
  oldMode: string;
  newMode: string;
  oldOid: string;
  newOid: string;
  path: string;
}

/** The commit ids `diff-tree --stdin` is given: each commit against its first parent, a root alone. */
function stdinPairs(commits: HistoryCommit[]): string {
  return commits.map((c) => (c.parents.length ? `${c.oid} ${c.parents[0]}\n` : `${c.oid}\n`)).join('');
}

/**
 * `git diff-tree -r --raw --no-renames` of each commit against its first parent (roots against the empty
 * tree), by commit id.
 */
export async function rawChanges(
  gitDir: string,
  commits: HistoryCommit[],
): Promise<Map<string, RawChange[]>> {
  const out = (
    await gitBytes(
      gitDir,
      ['diff-tree', '--stdin', '-r', '--root', '--raw', '--no-renames', '-z'],
      stdinPairs(commits),
    )
  ).toString('utf8');
  const byCommit = new Map<string, RawChange[]>();
  for (const [oid, fields] of fieldsByCommit(out)) {
    const changes: RawChange[] = [];
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const [oldMode, newMode, oldOid, newOid, status] = fields[i].slice(1).split(' ');
      changes.push({ status, oldMode, newMode, oldOid, newOid, path: fields[i + 1] });
    }
    byCommit.set(oid, changes);
  }
  for (const c of commits) if (!byCommit.has(c.oid)) byCommit.set(c.oid, []);
  return byCommit;
}

/** `git diff-tree -p` of each commit against its first parent (what `git diff parent commit` prints). */
export async function patches(
  gitDir: string,
  commits: HistoryCommit[],
  extraArgs: string[] = [],
): Promise<Map<string, Buffer>> {
  const out = await gitBytes(
    gitDir,
    [
      '-c',
      'core.quotePath=false',
      'diff-tree',
      '--stdin',
      '-r',
      '--root',
      '-p',
      '--no-renames',
      ...extraArgs,
    ],
    stdinPairs(commits),
  );
  // Each commit's patch starts with its id on a line of its own ("<id> (from <parent>)" for a merge).
  const byCommit = new Map<string, Buffer>();
  const header = /^([0-9a-f]{40})(?: \(from [0-9a-f]{40}\))?\n/gm;
  const text = out.toString('latin1');
  const starts: { oid: string; at: number; body: number }[] = [];
  for (let m = header.exec(text); m; m = header.exec(text)) {
    starts.push({ oid: m[1], at: m.index, body: m.index + m[0].length });
  }
  starts.forEach((s, k) => {
    byCommit.set(s.oid, out.subarray(s.body, k + 1 < starts.length ? starts[k + 1].at : out.length));
  });
  for (const c of commits) if (!byCommit.has(c.oid)) byCommit.set(c.oid, Buffer.alloc(0));
  return byCommit;
}

/** Object contents by id, from one `git cat-file --batch`. */
export async function readObjects(gitDir: string, oids: Iterable<string>): Promise<Map<string, Uint8Array>> {
  const wanted = [...new Set(oids)];
  const out = await gitBytes(gitDir, ['cat-file', '--batch'], wanted.map((o) => `${o}\n`).join(''));
  const objects = new Map<string, Uint8Array>();
  let at = 0;
  while (at < out.length) {
    const eol = out.indexOf(0x0a, at);
    const [oid, , size] = out.subarray(at, eol).toString().split(' ');
    const length = Number(size);
    objects.set(oid, out.subarray(eol + 1, eol + 1 + length));
    at = eol + 1 + length + 1;
  }
  return objects;
}

/**
 * `git diff-tree -r --name-status <args>` of each [commit, parent] pair, as "R087 old new" / "M path"
 * lines, in one process.
 */
export async function nameStatuses(
  gitDir: string,
  pairs: [string, string][],
  args: string[],
): Promise<string[][]> {
  // diff-tree --stdin takes ids, not names: a "commit parent" line diffs the commit against that parent.
  const input = pairs.map(([c, p]) => `${c} ${p}\n`).join('');
  const out = (
    await gitBytes(gitDir, ['diff-tree', '--stdin', '-r', '--name-status', '-z', ...args], input)
  ).toString();
  const byId = new Map<string, string[]>();
  for (const [oid, fields] of fieldsByCommit(out)) {
    const lines: string[] = [];
    for (let i = 0; i < fields.length; ) {
      const renamed = /^[RC]\d{3}$/.test(fields[i]);
      lines.push(fields.slice(i, i + (renamed ? 3 : 2)).join(' '));
      i += renamed ? 3 : 2;
    }
    byId.set(oid, lines);
  }
  return pairs.map(([c]) => byId.get(c) ?? []);
}
