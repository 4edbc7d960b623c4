import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import git from 'isomorphic-git';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startGitServer } from '../server/gitServer.ts';
import { startCorsProxy } from '../server/proxy/nodeProxy.ts';
import { GITDIR } from '../workers/store/repoFs.ts';
import { testEngine } from './support/engine.ts';
import { git as gitCli } from './support/git.ts';
import { type PushServer, startPushServer } from './support/pushServer.ts';
import { startRelay } from './support/relay.ts';
import { failure, packFiles } from './support/repoChecks.ts';
import { useTmpDir } from './support/tmpDir.ts';
import { setTreeEntry, type TreeEntry } from './support/treeEdit.ts';
import { readLightningWorktree } from './support/worktree.ts';

const { engine, ctx } = testEngine();

const author = { name: 'Grace Hopper', email: 'grace@example.com' };
const tmp = useTmpDir('push-test');
let push: PushServer;

// Each test pushes to fresh copies: a push changes the repository.
beforeAll(async () => {
  push = await startPushServer(['basic.git']);
});
afterEach(async () => {
  await push.close();
  push = await startPushServer(['basic.git']);
});
afterAll(async () => {
  await push.close();
});

const bareGit = (args: string[]) => gitCli(args, { cwd: push.bare('basic.git') });

/**
 * A new commit on `parent` made with isomorphic-git's object writers, without a working tree, so no blob
 * of the clone is ever read or fetched: `files` maps paths to new contents, or to null to delete them,
 * or to `{ from }` to move an existing entry (whose blob this clone does not hold).
 */
async function commitWithoutCheckout(
  repoId: string,
  parent: string,
  files: Record<string, string | null | { from: string }>,
  message: string,
): Promise<string> {
  const fs = ctx.store.repoFs.open(repoId);
  const gitdir = GITDIR;
  const { commit } = await git.readCommit({ fs, gitdir, oid: parent });
  const entryAt = async (tree: string, parts: string[]): Promise<TreeEntry> => {
    const { tree: entries } = await git.readTree({ fs, gitdir, oid: tree });
    const found = entries.find((e) => e.path === parts[0]);
    if (!found) throw new Error(`no ${parts.join('/')}`);
    return parts.length === 1 ? (found as TreeEntry) : entryAt(found.oid, parts.slice(1));
  };
  const setEntry = (tree: string | null, parts: string[], entry: TreeEntry | null) =>
    setTreeEntry(fs, gitdir, tree, parts, entry);
  let tree = commit.tree;
  for (const [path, change] of Object.entries(files)) {
    let entry: TreeEntry | null = null;
    if (typeof change === 'string') {
      const oid = await git.writeBlob({ fs, gitdir, blob: new TextEncoder().encode(change) });
      entry = { mode: '100644', path, oid, type: 'blob' };
    } else if (change) {
      entry = await entryAt(commit.tree, change.from.split('/'));
      tree = await setEntry(tree, change.from.split('/'), null);
    }
    tree = await setEntry(tree, path.split('/'), entry);
  }
  const ident = { ...author, timestamp: 1_700_000_000, timezoneOffset: 0 };
  const oid = await git.writeCommit({
    fs,
    gitdir,
    commit: { tree, parent: [parent], author: ident, committer: ident, message: `${message}\n` },
  });
  await git.writeRef({ fs, gitdir, ref: 'refs/heads/main', value: oid, force: true });
  return oid;
}

/** The objects of a pack, by the git CLI: `index-pack` then `verify-pack -v`. */
async function packObjects(pack: Buffer): Promise<{ oid: string; type: string }[]> {
  const file = join(tmp(), `sent-${Date.now()}.pack`);
  await writeFile(file, pack);
  await gitCli(['index-pack', file], { cwd: push.bare('basic.git') });
  const out = await gitCli(['verify-pack', '-v', file.replace(/\.pack$/, '.idx')]);
  return out
    .split('\n')
    .map((l) => l.split(/\s+/))
    .filter((f) => /^[0-9a-f]{40}$/.test(f[0]) && ['commit', 'tree', 'blob', 'tag'].includes(f[1]))
    .map((f) => ({ oid: f[0], type: f[1] }));
}

describe('push', () => {
  it('sends exactly the objects the remote lacks, reading and fetching no blob of the clone', async () => {
    const requests: { path: string; body: Buffer }[] = [];
    const relay = await startRelay(push.server.url, { kind: 'record', requests });
    try {
      const { repoId } = await engine.clone({ url: `${relay.url}/basic.git` });
      const base = (await bareGit(['rev-parse', 'main'])).trim();
      // Two blobs stored (as a file view fetches them), which the push must leave out: the remote has them.
      await engine.repo(repoId).readFile({ ref: 'main', path: 'src/main.js' });
      await engine.repo(repoId).readFile({ ref: 'main', path: 'docs/guide.txt' });
      const packsBefore = await packFiles(ctx, repoId);
      // A change and a new file in a folder, then a file moved whose blob this clone never fetched; docs/
      // stays as the remote has it.
      const first = await commitWithoutCheckout(
        repoId,
        base,
        { 'src/greet.js': 'export const greet = () => "hi";\n', 'src/extra.js': 'export {};\n' },
        'Edit and add',
      );
      const tip = await commitWithoutCheckout(
        repoId,
        first,
        { 'src/README.md': { from: 'README.md' } },
        'Move the readme',
      );
      const before = push.server.stats('basic.git');
      requests.length = 0;

      const result = await engine.repo(repoId).push();

      const after = push.server.stats('basic.git');
      expect(after.fetches).toBe(before.fetches);
      expect(after.pushes).toBe(before.pushes + 1);
      expect(await packFiles(ctx, repoId)).toEqual(packsBefore);
      expect(result).toMatchObject({ ref: 'refs/heads/main', oldOid: base, newOid: tip, upToDate: false });

      // git as the oracle: what `rev-list --objects` says the remote lacked is what the pack held.
      const posted = requests.find((r) => r.path.endsWith('/git-receive-pack'))!;
      const sent = await packObjects(posted.body.subarray(posted.body.indexOf('PACK')));
      const oracle = (await bareGit(['rev-list', '--objects', `${base}..${tip}`]))
        .split('\n')
        .filter(Boolean)
        .map((l) => l.slice(0, 40));
      expect(sent.map((o) => o.oid).sort()).toEqual(oracle.sort());
      const blobs = sent.filter((o) => o.type === 'blob');
      expect(blobs).toHaveLength(2);
      expect(result.sent).toEqual({ commits: 2, trees: 4, blobs: 2, packBytes: expect.any(Number) });

      expect((await bareGit(['rev-parse', 'main'])).trim()).toBe(tip);
      expect(await bareGit(['log', '-1', '--format=%an <%ae>%n%s', 'main'])).toBe(
        'Grace Hopper <grace@example.com>\nMove the readme\n',
      );
      await bareGit(['fsck', '--no-progress']);
      // The remote-tracking branch follows, in packed-refs.
      const fs = ctx.store.repoFs.open(repoId);
      expect(await git.resolveRef({ fs, gitdir: GITDIR, ref: 'refs/remotes/origin/main' })).toBe(tip);
      expect(await fs.promises.readFile(`${GITDIR}/packed-refs`, 'utf8')).toContain(
        `${tip} refs/remotes/origin/main\n`,
      );

      // Nothing new: nothing is sent, not even a request to receive-pack.
      const again = await engine.repo(repoId).push();
      expect(again.upToDate).toBe(true);
      expect(push.server.stats('basic.git').pushes).toBe(after.pushes);
    } finally {
      await relay.close();
    }
  });

  it('edits, commits and pushes through the CORS proxy', async () => {
    const proxy = await startCorsProxy({ localHosts: [new URL(push.server.url).host] });
    try {
      const { repoId } = await engine.clone({ url: push.url('basic.git'), corsProxy: proxy.url });
      await engine.repo(repoId).writeWorktreeFile({ path: 'docs/guide.txt', content: 'Rewritten.\n' });
      await engine.repo(repoId).stage({ paths: ['docs/guide.txt'] });
      const { oid } = await engine.repo(repoId).commit({ message: 'Rewrite the guide', author });
      const before = push.server.stats('basic.git');
      const result = await engine.repo(repoId).push();
      expect(result.newOid).toBe(oid);
      expect(result.sent).toMatchObject({ commits: 1, blobs: 1, trees: 2 });
      expect(push.server.stats('basic.git').fetches).toBe(before.fetches);
      expect((await bareGit(['rev-parse', 'main'])).trim()).toBe(oid);
      expect(await bareGit(['show', 'main:docs/guide.txt'])).toBe('Rewritten.\n');
      await bareGit(['fsck', '--no-progress']);
    } finally {
      await proxy.close();
    }
  });

  it('creates a new branch from an older commit, sending only its new commit', async () => {
    const { repoId } = await engine.clone({ url: push.url('basic.git') });
    // Made from main~3: the walk must find that the remote has it although no remote ref names it.
    await engine
      .repo(repoId)
      .createBranch({ name: 'topic', start: (await bareGit(['rev-parse', 'main~3'])).trim() });
    await engine.repo(repoId).checkout({ ref: 'topic' });
    await engine
      .repo(repoId)
      .writeWorktreeFile({ path: 'topic.txt', content: 'a file only the topic branch has\n' });
    await engine.repo(repoId).stage({ paths: ['topic.txt'] });
    const { oid } = await engine.repo(repoId).commit({ message: 'Topic', author });
    const result = await engine.repo(repoId).push();
    expect(result.oldOid).toBe('0000000000000000000000000000000000000000');
    expect(result.sent).toMatchObject({ commits: 1, blobs: 1, trees: 1 });
    expect((await bareGit(['rev-parse', 'topic'])).trim()).toBe(oid);
    const oracle = (await bareGit(['rev-list', '--objects', 'topic', '^main'])).split('\n').filter(Boolean);
    expect(oracle).toHaveLength(3);
    await bareGit(['fsck', '--no-progress']);
  });
});

describe('rejected push', () => {
  /** Everything local a rejected push must not touch. */
  async function localState(repoId: string) {
    const fs = ctx.store.repoFs.open(repoId);
    return {
      main: await git.resolveRef({ fs, gitdir: GITDIR, ref: 'refs/heads/main' }),
      head: await git.resolveRef({ fs, gitdir: GITDIR, ref: 'HEAD' }),
      worktree: await readLightningWorktree(fs),
      status: await engine.repo(repoId).status(),
    };
  }

  async function cloneAndCommit(): Promise<{ repoId: string; oid: string }> {
    const { repoId } = await engine.clone({ url: push.url('basic.git') });
    await engine.repo(repoId).writeWorktreeFile({ path: 'README.md', content: '# local change\n' });
    await engine.repo(repoId).stage({ paths: ['README.md'] });
    const { oid } = await engine.repo(repoId).commit({ message: 'Local change', author });
    // An unstaged edit too: the working tree must come out as it went in.
    await engine.repo(repoId).writeWorktreeFile({ path: 'src/main.js', content: 'unstaged\n' });
    return { repoId, oid };
  }

  /** Someone else pushes first, with the git CLI. */
  async function pushFromElsewhere(): Promise<string> {
    const work = join(tmp(), `elsewhere-${Date.now()}`);
    await gitCli(['clone', '-q', push.url('basic.git'), work]);
    await gitCli(
      [
        '-c',
        'user.name=Other',
        '-c',
        'user.email=o@example.com',
        'commit',
        '-q',
        '--allow-empty',
        '-m',
        'Theirs',
      ],
      { cwd: work },
    );
    await gitCli(['push', '-q', 'origin', 'main'], { cwd: work });
    return (await gitCli(['rev-parse', 'HEAD'], { cwd: work })).trim();
  }

  it('says "fetch first" when the remote has commits this clone has never seen, and loses nothing', async () => {
    const { repoId, oid } = await cloneAndCommit();
    const theirs = await pushFromElsewhere();
    const before = await localState(repoId);
    const pushes = push.server.stats('basic.git').pushes;

    const err = await failure(engine.repo(repoId).push());
    expect(err.name).toBe('PushRejectedError');
    expect(err.code).toBe('PUSH_NON_FAST_FORWARD');
    expect(err.message).toMatch(/fetch first.*Pull/);

    expect(push.server.stats('basic.git').pushes).toBe(pushes);
    expect((await bareGit(['rev-parse', 'main'])).trim()).toBe(theirs);
    expect(await localState(repoId)).toEqual(before);
    expect(before.main).toBe(oid);
  });

  it('is refused by the server (receive.denyNonFastForwards) even when forced, and loses nothing', async () => {
    const { repoId, oid } = await cloneAndCommit();
    // Move the remote on, with a commit this clone then knows about but does not descend from.
    const fs = ctx.store.repoFs.open(repoId);
    const { commit } = await git.readCommit({ fs, gitdir: GITDIR, oid });
    const theirs = await pushFromElsewhere();
    await bareGit(['config', 'receive.denyNonFastForwards', 'true']);
    const before = await localState(repoId);

    const err = await failure(engine.repo(repoId).push({ force: true }));
    expect(err.code).toBe('PUSH_NON_FAST_FORWARD');
    expect((err as { remoteMessage?: string }).remoteMessage).toBe('non-fast-forward');
    expect((await bareGit(['rev-parse', 'main'])).trim()).toBe(theirs);
    expect(await localState(repoId)).toEqual(before);
    expect(commit.parent).toHaveLength(1);
  });

  it('refuses locally, before sending, when the remote tip is known and not an ancestor', async () => {
    const { repoId } = await engine.clone({ url: push.url('basic.git') });
    const base = (await bareGit(['rev-parse', 'main'])).trim();
    const fs = ctx.store.repoFs.open(repoId);
    const parent = (await git.readCommit({ fs, gitdir: GITDIR, oid: base })).commit.parent[0];
    // main rewound one commit, then a new commit: the remote's tip is known here but would be dropped.
    await commitWithoutCheckout(repoId, parent, { 'other.txt': 'other\n' }, 'Diverge');
    const pushes = push.server.stats('basic.git').pushes;
    const err = await failure(engine.repo(repoId).push());
    expect(err.code).toBe('PUSH_NON_FAST_FORWARD');
    expect(err.message).toMatch(/non-fast-forward/);
    expect(push.server.stats('basic.git').pushes).toBe(pushes);
    expect((await bareGit(['rev-parse', 'main'])).trim()).toBe(base);
  });

  it('says the server takes no pushes when receive-pack is off', async () => {
    const { repoId } = await engine.clone({ url: push.url('basic.git') });
    // The same repository served as the fixtures are: http.receivepack false.
    const readOnly = await startGitServer({ root: join(push.bare('basic.git'), '..') });
    try {
      await ctx.store.registry.update(repoId, (r) => ({ ...r, url: `${readOnly.url}/basic.git` }));
      await commitWithoutCheckout(
        repoId,
        (await bareGit(['rev-parse', 'main'])).trim(),
        { 'x.txt': 'x\n' },
        'X',
      );
      expect((await failure(engine.repo(repoId).push())).code).toBe('PUSH_FORBIDDEN');
    } finally {
      await readOnly.close();
    }
  });
});
