// Pushes a branch through git-receive-pack without fetching a blob. In a blob:none clone most blobs are
// absent, and isomorphic-git's push lists every blob of every new commit's tree and reads them all (its
// listObjects walks whole trees), which would fetch the repository. Here the objects to send are the new
// commits, their trees and the blobs those trees name, minus everything the trees of the commits the remote
// already has name: trees are read (all local), blob ids come from tree entries, and a blob is read only
// when it goes into the pack. A blob the remote lacks is one we made, so it is stored locally; a blob we do
// not store is a promisor object, which the remote has by definition: it is never sent, never fetched.

import git from 'isomorphic-git';
import { ZERO_OID } from '../../model/objectId.ts';
import { TimeSlice } from '../../pack/timeSlice.ts';
import { MODE_GITLINK, MODE_TREE_PADDED as MODE_TREE, type ParsedTreeEntry } from '../../pack/treeCheck.ts';
import { writePackedRefs } from '../../store/gitDir.ts';
import { type PackedRef, parsePackedRefs } from '../../store/packedRefs.ts';
import { GITDIR } from '../../store/repoFs.ts';
import { TransportError } from '../../transport/errors.ts';
import type { GitHttpClient } from '../../transport/gitHttp.ts';
import { CLIENT_AGENT, parseInfoRefs } from '../../wire/capabilities.ts';
import { WireError } from '../../wire/errors.ts';
import { readPackets } from '../../wire/pktLine.ts';
import { buildReceivePackRequest, parseReportStatus } from '../../wire/receivePack.ts';
import { readCheckedTree } from '../common/checkedTrees.ts';
import { connect, type OpsContext } from '../common/engineContext.ts';
import { OperationError, PushRejectedError, throwIfAborted } from '../common/errors.ts';
import type { OperationHooks } from '../common/operationHooks.ts';
import { openRepo, type RepoHandle } from '../common/repoAccess.ts';

/** What a push tells onProgress, in order. */
export type PushProgress =
  | {
      /** Asking the server where its branches are (receive-pack's advertisement). */
      phase: 'negotiating';
    }
  | {
      /** Finding the objects the server lacks: the new commits, and the trees and blobs they add. */
      phase: 'counting';
      /** Commits found so far. */
      commits: number;
      /** Trees found so far. */
      trees: number;
      /** Blobs found so far (all stored already: a push never fetches one). */
      blobs: number;
    }
  | {
      /** The pack going to the server. */
      phase: 'sending';
      /** The request's size in bytes (pack and commands). */
      bytes: number;
    };

/** What to push where; by default the current branch to the branch of the same name. */
export interface PushOptions {
  /** The local branch to push; the current one when omitted. */
  branch?: string;
  /** The branch to update on the remote; the same name when omitted. */
  remoteBranch?: string;
  /** Overwrite the remote branch even when that drops its commits (`git push --force`). */
  force?: boolean;
}

/** What a push changed on the remote, and what it sent. */
export interface PushResult {
  /** The remote ref updated (`refs/heads/main`). */
  ref: string;
  /** Its value on the remote before the push: 40 zeros when the push created it. */
  oldOid: string;
  /** Its value now: the pushed commit. */
  newOid: string;
  /** The remote branch already pointed at our commit: nothing was sent. */
  upToDate: boolean;
  /** What the pack held (all 0 when up to date). */
  sent: {
    /** Commits sent. */
    commits: number;
    /** Trees sent. */
    trees: number;
    /** Blobs sent. */
    blobs: number;
    /** The pack's size in bytes. */
    packBytes: number;
  };
  /** What the server's hooks printed (sideband 2), if anything. */
  remoteMessages: string;
}

const AGENT = `agent=${CLIENT_AGENT}`;

/**
 * Pushes `branch` to the remote it was cloned from. Throws PushRejectedError PUSH_NON_FAST_FORWARD when the
 * remote has commits the branch lacks (before sending anything when we can tell, else from the server's
 * report), PUSH_REJECTED for any other refusal, PUSH_FORBIDDEN when the server takes no pushes from us,
 * and the transport's typed errors. Local branches, commits and the working tree never change; on success
 * `refs/remotes/origin/<remoteBranch>` moves to the pushed commit, in packed-refs.
 */
export async function push(
  ctx: OpsContext,
  repoId: string,
  opts: PushOptions = {},
  hooks: OperationHooks<PushProgress> = {},
): Promise<PushResult> {
  const { signal, onProgress } = hooks;
  throwIfAborted(signal);
  const repo = await openRepo(ctx, repoId);
  const { fs, gitdir } = repo;
  const branch = opts.branch ?? (await git.currentBranch({ fs, gitdir }));
  if (!branch) {
    throw new OperationError(
      'DETACHED_HEAD',
      'HEAD is not on a branch. Create a branch for these commits, then push it.',
    );
  }
  const remoteBranch = opts.remoteBranch ?? branch;
  const ref = `refs/heads/${remoteBranch}`;
  let newOid: string;
  try {
    newOid = await git.resolveRef({ fs, gitdir, ref: `refs/heads/${branch}` });
  } catch {
    throw new OperationError('REF_NOT_FOUND', `There is no local branch "${branch}" to push.`);
  }

  onProgress?.({ phase: 'negotiating' });
  const client = connect(ctx, repo.record.url, {
    corsProxy: repo.record.corsProxy,
    auth: ctx.store.credentials.for(repo.record),
    signal,
    // receive-pack has no v2: a Git-Protocol header would only confuse a proxy.
    protocol: null,
  });
  const advertised = await advertisement(client);
  const remoteOids = new Map(advertised.refs.map((r) => [r.name, r.oid]));
  const oldOid = remoteOids.get(ref) ?? ZERO_OID;
  const empty = { commits: 0, trees: 0, blobs: 0, packBytes: 0 };
  if (oldOid === newOid) {
    await setRemoteTracking(ctx, repo, remoteBranch, newOid);
    return { ref, oldOid, newOid, upToDate: true, sent: empty, remoteMessages: '' };
  }

  if (oldOid !== ZERO_OID && !opts.force) {
    if (!(await isCommit(repo, oldOid))) {
      throw new PushRejectedError(
        'PUSH_NON_FAST_FORWARD',
        ref,
        `The remote branch ${remoteBranch} has commits that this clone does not (fetch first). Pull to merge them into ${branch}, then push again.`,
        'fetch first',
      );
    }
    const ff = await git.isDescendent({
      fs,
      gitdir,
      oid: newOid,
      ancestor: oldOid,
      depth: -1,
      cache: repo.cache,
    });
    if (!ff) {
      throw new PushRejectedError(
        'PUSH_NON_FAST_FORWARD',
        ref,
        `${branch} does not contain the remote ${remoteBranch}'s latest commit (non-fast-forward): pushing would drop commits. Pull to merge them, then push again, or force the push.`,
        'non-fast-forward',
      );
    }
  }

  // What the remote has: every advertised commit we also have, and all their history.
  const remoteTips: string[] = [];
  for (const oid of new Set(remoteOids.values())) if (await isCommit(repo, oid)) remoteTips.push(oid);
  const objects = await objectsToSend(ctx, repo, newOid, remoteTips, {
    signal,
    onCount: (counts) => onProgress?.({ phase: 'counting', ...counts }),
  });
  throwIfAborted(signal);
  const { packfile } = await git.packObjects({ fs, gitdir, oids: objects.oids, cache: repo.cache });
  if (!packfile) throw new OperationError('INTERNAL', 'isomorphic-git built no pack.');

  const caps = advertised.capabilities;
  const wanted = ['report-status', 'side-band-64k', 'quiet'].filter((c) => caps.includes(c));
  if (!wanted.includes('report-status')) {
    throw new OperationError(
      'PUSH_REJECTED',
      'The server does not report push results (no report-status); Blobless will not push blind.',
    );
  }
  const body = buildReceivePackRequest([{ oldOid, newOid, name: ref }], [...wanted, AGENT], packfile);
  onProgress?.({ phase: 'sending', bytes: body.length });
  const response = await client.post('git-receive-pack', body);
  let report: Awaited<ReturnType<typeof parseReportStatus>>;
  try {
    report = await parseReportStatus(readPackets(response), wanted.includes('side-band-64k'));
  } catch (err) {
    // The server answered, so it had the whole request: whether it updated the branch is unknown. Never
    // sent again on its own (receive-pack is not idempotent); the person is told how to find out.
    if (signal?.aborted || !(err instanceof TransportError || err instanceof WireError)) throw err;
    throw Object.assign(
      new OperationError(
        'PUSH_OUTCOME_UNKNOWN',
        `The server's answer to the push of ${branch} broke off (${err.message}). The server may have updated ${remoteBranch} anyway: push again (it says so if it already has the commits), or fetch to see.`,
      ),
      { cause: err },
    );
  }
  if (!report.unpack.ok) {
    throw new PushRejectedError(
      'PUSH_REJECTED',
      ref,
      `The server could not store the pushed objects: ${report.unpack.reason}.`,
      report.unpack.reason,
    );
  }
  const status = report.refs.find((r) => r.name === ref);
  if (!status?.ok) {
    const reason = status?.reason ?? 'no status for the branch';
    const nff = /non-fast-forward|fetch first|stale info/.test(reason);
    throw new PushRejectedError(
      nff ? 'PUSH_NON_FAST_FORWARD' : 'PUSH_REJECTED',
      ref,
      nff
        ? `The remote refused ${remoteBranch} (${reason}): it has commits ${branch} lacks. Pull to merge them, then push again.`
        : `The remote refused ${remoteBranch}: ${reason}.`,
      reason,
    );
  }
  // The server has the push; a crash before the remote-tracking ref is stored leaves it behind the
  // server, as any push by someone else would: the next push (already up to date) or fetch moves it.
  await ctx.store.crash.at('push:remote-updated');
  await setRemoteTracking(ctx, repo, remoteBranch, newOid);
  return {
    ref,
    oldOid,
    newOid,
    upToDate: false,
    sent: {
      commits: objects.commits,
      trees: objects.trees,
      blobs: objects.blobs,
      packBytes: packfile.length,
    },
    remoteMessages: report.messages,
  };
}

async function advertisement(client: GitHttpClient) {
  let body: Uint8Array;
  try {
    body = await client.infoRefs('git-receive-pack');
  } catch (err) {
    if (err instanceof TransportError && err.code === 'HTTP_FORBIDDEN') {
      throw new OperationError(
        'PUSH_FORBIDDEN',
        `${client.url.href} does not accept pushes from you (403): the repository is read-only, or the token lacks write access.`,
      );
    }
    throw err;
  }
  const parsed = parseInfoRefs(body, 'git-receive-pack');
  if (parsed.version === 2) {
    throw new OperationError(
      'PUSH_REJECTED',
      'The server answered the push with protocol v2, which has no push.',
    );
  }
  return parsed;
}

async function isCommit(repo: RepoHandle, oid: string): Promise<boolean> {
  try {
    await git.readCommit({ fs: repo.fs, gitdir: repo.gitdir, oid, cache: repo.cache });
    return true;
  } catch {
    return false;
  }
}

interface ObjectList {
  oids: string[];
  commits: number;
  trees: number;
  blobs: number;
}

/**
 * The objects reachable from `tip` and not from `remoteTips`, as `git rev-list --objects tip --not
 * remoteTips` lists them, except blobs we do not store (promisor objects: the remote has them). Reads
 * commits and trees only.
 */
export async function objectsToSend(
  ctx: OpsContext,
  repo: RepoHandle,
  tip: string,
  remoteTips: string[],
  hooks: {
    signal?: AbortSignal;
    onCount?: (c: { commits: number; trees: number; blobs: number }) => void;
  } = {},
): Promise<ObjectList> {
  const { fs, gitdir, cache } = repo;
  const { signal, onCount } = hooks;
  const readCommit = async (oid: string) => (await git.readCommit({ fs, gitdir, oid, cache })).commit;

  const { newCommits, boundary } = await newCommitsOf(repo, tip, remoteTips, signal);
  const boundaryTrees = new Set<string>();
  for (const oid of boundary) boundaryTrees.add((await readCommit(oid)).tree);

  // Everything the boundary commits' trees name is on the remote: those trees are walked whole (trees only).
  const onRemote = new Set<string>();
  for (const tree of boundaryTrees) {
    throwIfAborted(signal);
    await eachTreeOnce(repo, tree, onRemote, (entry) => {
      if (entry.mode !== MODE_TREE) onRemote.add(entry.oid);
    });
  }

  const packs = await ctx.store.packs.for(repo.id);
  const isStored = async (oid: string) =>
    packs.has(oid) ||
    (await fs.promises.stat(`${GITDIR}/objects/${oid.slice(0, 2)}/${oid.slice(2)}`).then(
      () => true,
      () => false,
    ));
  const trees: string[] = [];
  const blobs: string[] = [];
  const listed = new Set<string>(onRemote);
  const newBlobs: string[] = [];
  for (const c of newCommits) {
    throwIfAborted(signal);
    await eachTreeOnce(
      repo,
      c.tree,
      listed,
      (entry) => {
        if (entry.mode === MODE_GITLINK || entry.mode === MODE_TREE || listed.has(entry.oid)) return;
        listed.add(entry.oid);
        newBlobs.push(entry.oid);
      },
      (tree) => trees.push(tree),
    );
    for (const oid of newBlobs.splice(0)) if (await isStored(oid)) blobs.push(oid);
    onCount?.({ commits: newCommits.length, trees: trees.length, blobs: blobs.length });
  }
  return {
    oids: [...newCommits.map((c) => c.oid), ...trees, ...blobs],
    commits: newCommits.length,
    trees: trees.length,
    blobs: blobs.length,
  };
}

// Commits read past the point where every queued commit is the remote's, for clocks that went backwards
// (git's revision.c uses the same slop of 5).
const WALK_SLOP = 5;

/**
 * `git rev-list tip --not remoteTips`, as git's revision walk does it: newest commit first from both sides,
 * the remote's mark passed down to parents, stopping once only the remote's commits are left (plus a slop).
 * So only the commits between the tips and their merge base are read, not the whole history. Returns the
 * new commits (newest first) and the boundary: the remote's commits that are parents of new ones.
 */
async function newCommitsOf(
  repo: RepoHandle,
  tip: string,
  remoteTips: string[],
  signal: AbortSignal | undefined,
): Promise<{ newCommits: { oid: string; tree: string }[]; boundary: string[] }> {
  const { fs, gitdir, cache } = repo;
  type Read = { time: number; tree: string; parents: string[] } | null;
  const read = new Map<string, Read>();
  const load = async (oid: string): Promise<Read> => {
    if (!read.has(oid)) {
      try {
        const { commit } = await git.readCommit({ fs, gitdir, oid, cache });
        read.set(oid, { time: commit.committer.timestamp, tree: commit.tree, parents: commit.parent });
      } catch {
        // Past a shallow clone's boundary: the walk stops there.
        read.set(oid, null);
      }
    }
    return read.get(oid)!;
  };
  const remote = new Set<string>();
  const queued = new Set<string>();
  const queue: { oid: string; time: number }[] = [];
  const enqueue = async (oid: string, isRemote: boolean) => {
    if (remote.has(oid) || (!isRemote && queued.has(oid))) return;
    if (isRemote) remote.add(oid);
    queued.add(oid);
    const commit = await load(oid);
    if (!commit) return;
    // Newest first; ties keep insertion order.
    let i = queue.length;
    while (i > 0 && queue[i - 1].time < commit.time) i--;
    queue.splice(i, 0, { oid, time: commit.time });
  };
  for (const oid of remoteTips) await enqueue(oid, true);
  await enqueue(tip, false);

  const walked: string[] = [];
  let slop = WALK_SLOP;
  while (queue.length > 0) {
    throwIfAborted(signal);
    if (queue.every((q) => remote.has(q.oid)) && --slop < 0) break;
    const { oid } = queue.shift()!;
    const commit = (await load(oid))!;
    const isRemote = remote.has(oid);
    if (!isRemote) walked.push(oid);
    for (const parent of commit.parents) await enqueue(parent, isRemote);
  }
  const newCommits = walked
    .filter((oid) => !remote.has(oid))
    .map((oid) => ({ oid, tree: read.get(oid)!.tree }));
  const boundary = new Set<string>();
  for (const { oid } of newCommits) {
    for (const parent of read.get(oid)!.parents) if (remote.has(parent)) boundary.add(parent);
  }
  return { newCommits, boundary: [...boundary] };
}

/** Moves `refs/remotes/origin/<branch>` in packed-refs, where the clone keeps remote-tracking refs. */
async function setRemoteTracking(
  ctx: OpsContext,
  repo: RepoHandle,
  branch: string,
  oid: string,
): Promise<void> {
  const fs = repo.fs.promises;
  const name = `refs/remotes/origin/${branch}`;
  await ctx.store.repoFs.writeAllOrNothing(repo.id, async () => {
    const text = await fs.readFile(`${GITDIR}/packed-refs`, { encoding: 'utf8' }).then(
      (t) => t as string,
      () => '',
    );
    const refs: PackedRef[] = parsePackedRefs(text).filter((r) => r.name !== name);
    refs.push({ name, oid });
    await writePackedRefs(fs, refs, [name]);
    await ctx.store.crash.at('push:tracking-written');
  });
}

/**
 * Reads every tree under `root` not in `seen` once (adding it there), each checked (checkedTrees.ts) at the
 * depth first met, with a stack rather than recursion, telling `onEntry` of their entries and `onTree` of
 * each tree read.
 */
async function eachTreeOnce(
  repo: RepoHandle,
  root: string,
  seen: Set<string>,
  onEntry: (entry: ParsedTreeEntry) => void,
  onTree?: (oid: string) => void,
): Promise<void> {
  const slice = new TimeSlice();
  const pending = [{ oid: root, path: '', depth: 0 }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    if (seen.has(next.oid)) continue;
    seen.add(next.oid);
    onTree?.(next.oid);
    await slice.pause();
    for (const entry of await readCheckedTree(repo, next.oid, next.path, next.depth)) {
      if (entry.mode === MODE_TREE)
        pending.push({ oid: entry.oid, path: `${next.path}${entry.name}/`, depth: next.depth + 1 });
      onEntry(entry);
    }
  }
}
