// Brings a stored repo up to date with its remote (gitprotocol-v2: ls-refs, fetch), as `git fetch origin`
// does for a partial clone: only the refs the fetch refspec tracks, the annotated tags that point into what
// arrives (followedTags.ts) or, when asked, every tag; `have` lines in growing rounds
// chosen by the skipping negotiator, the clone's filter again ("sticky", partial-clone), a thin pack
// completed from local objects, and remote-tracking refs, tags, `shallow` and the pack stored in one
// all-or-nothing batch.

import git from 'isomorphic-git';
import { DEFAULT_FETCH_REFSPEC, mapRef, parseRefspec, type Refspec } from '../../model/refspec.ts';
import type { GitObjectType } from '../../pack/objectHash.ts';
import type { IngestedPack } from '../../pack/packIngester.ts';
import { writePack, writePackedRefs, writeShallow } from '../../store/gitDir.ts';
import { type PackedRef, parsePackedRefs } from '../../store/packedRefs.ts';
import { GITDIR } from '../../store/repoFs.ts';
import type { GitHttpClient } from '../../transport/gitHttp.ts';
import { agentFor, parseInfoRefs } from '../../wire/capabilities.ts';
import { buildFetchRequest, INFINITE_DEPTH } from '../../wire/fetchCommand.ts';
import type { RemoteRef } from '../../wire/lsRefs.ts';
import { connect } from '../common/engineContext.ts';
import { abortedError, OperationError, throwIfAborted } from '../common/errors.ts';
import { readLocalRefs } from '../common/localRefs.ts';
import type { OperationHooks } from '../common/operationHooks.ts';
import { openRepo, peelTags, type RepoHandle, shallowCommits } from '../common/repoAccess.ts';
import { commitGraphAfterStore } from '../maintenance/commitGraphUpdate.ts';
import { maintenanceIdle } from '../maintenance/packMaintenance.ts';
import type { CloneProgress } from './cloneTypes.ts';
import { checkFetchDepth } from './depthOptions.ts';
import { confirmPackedTags, tagsInPack } from './followedTags.ts';
import { type BlobContext, ensureBlobs } from './lazyBlobs.ts';
import { lsRefsAhead, lsRefsCall } from './lsRefsCall.ts';
import { SkippingNegotiator } from './negotiator.ts';
import { receivePack } from './receivePack.ts';
import { checkRemoteRefNames } from './remoteRefNames.ts';

/**
 * Which tags a fetch brings:
 * - `follow` (the default): the annotated tags that point into the commits it fetches, asked of the server
 *   with `include-tag` and confirmed by a narrow listing, so a fetch with nothing new lists no tag at all.
 *   Lightweight tags, and tags made or moved on commits already held, wait for `all`;
 * - `all`: every tag the server has, new and moved ones (`git fetch --tags`); tags deleted on the server
 *   stay, as with git;
 * - `none`: no tag (`git fetch --no-tags`).
 *
 * Whichever, a tag that a fetch refspec of the repo's config names (`+refs/tags/*:refs/tags/*`) is fetched
 * as any ref it names, as git does.
 */
export type FetchTags = 'follow' | 'all' | 'none';

/**
 * How long the tags a routine fetch does not see (lightweight ones, tags made or moved on commits already
 * held) may wait: a fetch without `tags` lists every tag once the last full listing is this old. A day, as
 * the issue asked: one full listing (23 KB on a project with 304 tags) a day against one per fetch.
 */
export const TAG_LIST_MAX_AGE_MS = 24 * 60 * 60 * 1000;

/** What a fetch brings; with none given, what `git fetch` would. */
export interface FetchOptions {
  /** Branches to fetch (names on the remote); every branch the fetch refspec tracks when absent. */
  refs?: string[];
  /**
   * Which tags come along (see FetchTags). Default `follow`, or `all` when every tag was last listed
   * TAG_LIST_MAX_AGE_MS ago or more (RepoRecord.tagsListedAt).
   */
  tags?: FetchTags;
  /**
   * Make the history this many commits deep from the remote's tips (`git fetch --depth`): 1 or more, as git
   * takes; 0, a negative or a fraction is INVALID_INPUT, before any request.
   */
  depth?: number;
  /**
   * Deepen a shallow clone by this many commits from its current boundary (`git fetch --deepen`); 0 is no
   * deepening, as with git, and a negative or a fraction INVALID_INPUT.
   */
  deepen?: number;
  /**
   * Fetch the whole history of a shallow clone (`git fetch --unshallow`); nothing more on a complete one. With
   * `depth` or `deepen` (but 0) INVALID_INPUT, as git refuses them together.
   */
  unshallow?: boolean;
}

/** What a fetch tells onProgress: a clone's phases, and the rounds of negotiation before the pack. */
export type FetchProgress =
  | CloneProgress
  | {
      /** Telling the server which commits this repo has, so that it sends only what is new. */
      phase: 'negotiating';
      /** The round of `have` lines being sent, from 1. */
      round: number;
      /** `have` lines sent so far, in all rounds. */
      haves: number;
    };

/** One local ref a fetch changed. */
export interface RefUpdate {
  /** The local ref: `refs/remotes/origin/main`, `refs/tags/v1`. */
  name: string;
  /** Its value before the fetch, null for a new ref. */
  old: string | null;
  /** Its value after the fetch. */
  new: string;
  /** `forced`: the old value is not an ancestor of the new one (history was rewritten on the remote). */
  kind: 'new' | 'fast-forward' | 'forced' | 'tag-moved';
}

/** What a fetch changed and what it cost. */
export interface FetchResult {
  /** Which tags it asked for: `all` when asked, or when the last full listing was a day old. */
  tags: FetchTags;
  /** Every local ref the fetch changed. */
  updated: RefUpdate[];
  /** The updates that dropped commits: forced branch updates and tags that moved. */
  forced: RefUpdate[];
  /** Commits received (new to this repo). */
  newCommits: number;
  /** Objects received, by type (`commit`, `tree`, `blob`, `tag`). */
  objects: Record<GitObjectType, number>;
  /** Objects the thin pack needed from this repo, appended to the stored pack. */
  completedFromLocal: number;
  /** Bytes the server sent (after HTTP decompression). */
  bytesReceived: number;
  /** HTTP requests made, retries included. */
  requests: number;
  /** What telling the server what this repo has cost. */
  negotiation: {
    /** Rounds of `have` lines sent before the pack (0 when there was nothing to fetch). */
    rounds: number;
    /** `have` lines sent in all rounds, the common ones repeated in each round as git does. */
    haves: number;
  };
  /** Whether the repo is still shallow afterwards. */
  shallow: boolean;
  /** The filter the fetch asked with (the repo's, `blob:none`), or null: a full clone, or a server that no longer filters. */
  filter: string | null;
  /** What the fetch did differently than asked, for people (a depth the server ignored, a ref skipped). */
  warnings: string[];
}

/*
 * Haves per round: 16 first, doubling (fetch-pack.c: INITIAL_FLUSH 16, next_flush doubles below
 * LARGE_FLUSH 16384 for stateless HTTP, then grows by 10 %). After 256 haves in a row without a new ACK,
 * once something was ACKed, git gives up and sends `done` (MAX_IN_VAIN); we do the same.
 */
const INITIAL_HAVES = 16;
const LARGE_FLUSH = 16384;
const MAX_IN_VAIN = 256;

/**
 * How the fetch stores what it received. By default the caller holds the repo's lock for the whole fetch
 * (the API's fetch). With `lockToStore`, the fetch receives without the lock and takes it only to store:
 * a long background fetch (the history fill) then never holds up a lazy blob fetch or an edit for more
 * than its commit. Under the lock it checks `shallow` is what the request was built on; if another
 * writer changed it meanwhile, nothing is stored and the fetch ends in `FETCH_STALE` (ask again).
 */
export interface FetchStoring {
  lockToStore?: { what: string };
}

export async function fetchRepo(
  ctx: BlobContext,
  repoId: string,
  opts: FetchOptions = {},
  hooks: OperationHooks<FetchProgress> = {},
  storing: FetchStoring = {},
): Promise<FetchResult> {
  const { signal, onProgress } = hooks;
  const { store } = ctx;
  checkFetchDepth(opts);
  const repo = await openRepo(ctx, repoId);
  const { record } = repo;
  const client = connect(ctx, record.url, {
    corsProxy: record.corsProxy,
    auth: store.credentials.for(record),
    signal,
    protocol: 'version=2',
    onRetry: ({ text, attempt, attempts, delayMs }) =>
      onProgress?.({ phase: 'retrying', text, attempt, attempts, delayMs }),
  });
  onProgress?.({ phase: 'connecting' });
  const listedAt = record.tagsListedAt ?? record.createdAt;
  const tags = opts.tags ?? (Date.now() - listedAt >= TAG_LIST_MAX_AGE_MS ? 'all' : 'follow');
  const config = await readRemoteConfig(repo);
  const refspecs = config.refspecs.length > 0 ? config.refspecs : [parseRefspec(DEFAULT_FETCH_REFSPEC)!];
  const branchPrefixes = opts.refs?.length
    ? opts.refs.map((b) => `refs/heads/${b.replace(/^refs\/heads\//, '')}`)
    : refspecs.map((r) => r.srcPrefix);
  const prefixes = tags === 'all' ? [...branchPrefixes, 'refs/tags/'] : branchPrefixes;
  // ls-refs goes out with the GET, as at clone; its answer is used only if the advertisement allows
  // (lsRefsAhead, docs/decisions/ls-refs-ahead.md): a fetch waits one round trip fewer.
  const ahead = lsRefsAhead(client, prefixes, ctx.settings.limits.maxLsRefsBytes, record.movedTo);
  const advertisement = parseInfoRefs(await client.infoRefs('git-upload-pack'));
  throwIfAborted(signal);
  if (advertisement.version !== 2) {
    throw new OperationError(
      'UNSUPPORTED_PROTOCOL',
      `${client.url.href} no longer speaks git protocol v2, which Blobless fetches with. Clone it again to get its latest state.`,
    );
  }
  const caps = advertisement.capabilities;
  const fetchCaps = caps.commands.get('fetch') ?? new Set<string>();
  const agent = agentFor(caps);
  const warnings: string[] = [];
  // Ref names become paths under .git/: one git would refuse is skipped with a warning, as at clone.
  const listed = checkRemoteRefNames(
    await lsRefsCall(client, caps, prefixes, { agent, maxBytes: ctx.settings.limits.maxLsRefsBytes, ahead }),
    undefined,
    client.url.href,
  );
  const remoteRefs = listed.kept;
  warnings.push(...listed.warnings);
  throwIfAborted(signal);

  // What each remote ref becomes locally, each local ref once.
  const planned: { remote: RemoteRef & { oid: string }; local: string }[] = [];
  const plannedLocal = new Set<string>();
  const plan = (remote: RemoteRef & { oid: string }, local: string) => {
    if (plannedLocal.has(local)) return;
    plannedLocal.add(local);
    planned.push({ remote, local });
  };
  for (const ref of remoteRefs) {
    if (ref.oid === null) continue;
    const remote = { ...ref, oid: ref.oid };
    // `--tags` adds refs/tags/*:refs/tags/* to the refspecs (git-fetch(1)).
    if (tags === 'all' && ref.name.startsWith('refs/tags/')) plan(remote, ref.name);
    if (opts.refs?.length && !branchPrefixes.includes(ref.name)) continue;
    // A tag too, when a refspec of the config names it (`+refs/tags/*:refs/tags/*`): git fetch updates those
    // with any tag option, `--no-tags` included, which only stops the following of tags.
    for (const local of mapRef(refspecs, ref.name)) plan(remote, local);
  }
  if (opts.refs?.length) {
    const missing = branchPrefixes.filter((p) => !planned.some((r) => r.remote.name === p));
    if (missing.length > 0) {
      throw new OperationError(
        'REF_NOT_FOUND',
        `The remote has no branch ${missing.map((m) => m.slice('refs/heads/'.length)).join(', ')}.`,
      );
    }
  }

  const packSet = await store.packs.for(repoId);
  const shallowBefore = await readShallow(repo);
  const isShallow = shallowBefore.length > 0;
  let deepen: number | undefined;
  let deepenRelative = false;
  if (opts.unshallow && isShallow) deepen = INFINITE_DEPTH;
  else if (opts.deepen) {
    deepen = opts.deepen;
    deepenRelative = true;
  } else if (opts.depth) deepen = opts.depth;
  if (deepen !== undefined && !fetchCaps.has('shallow')) {
    warnings.push('The server does not support shallow fetches; fetched without changing the depth.');
    deepen = undefined;
    deepenRelative = false;
  }
  if (deepenRelative && !isShallow) {
    // Nothing to deepen: the history is complete already.
    deepen = undefined;
    deepenRelative = false;
  }

  // git wants every ref it lacks; when deepening, every tip, since the history below them changes too. What a
  // ref here already names is held whole (refs move only in all-or-nothing writes): a commit made here and
  // pushed is loose, in no pack, and no want, as git's quickfetch finds it stored and connected.
  const named = new Set([...(await readLocalRefs(repo)).values()].map((r) => r.oid));
  const held = (oid: string) => packSet.has(oid) || named.has(oid);
  const wants = [
    ...new Set(planned.map((p) => p.remote.oid).filter((oid) => deepen !== undefined || !held(oid))),
  ];

  let filter: string | null = config.filter;
  if (filter && !fetchCaps.has('filter')) {
    warnings.push(
      'The server no longer supports partial clone (no `filter` capability); fetched everything new.',
    );
    filter = null;
  }

  let pack: IngestedPack | null = null;
  let shallowInfo: { shallow: string[]; unshallow: string[] } | null = null;
  const negotiation = { rounds: 0, haves: 0 };
  if (wants.length > 0) {
    const result = await negotiateAndReceive(ctx, repo, client, {
      wants,
      remoteOids: planned.map((p) => p.remote.peeled ?? p.remote.oid),
      shallow: shallowBefore,
      deepen,
      deepenRelative,
      filter,
      tags,
      agent,
      negotiation,
      hooks,
    });
    pack = result.pack;
    shallowInfo = result.shallowInfo;
    if (tags === 'follow') {
      const followed = await confirmPackedTags(client, caps, tagsInPack(pack), {
        agent,
        maxBytes: ctx.settings.limits.maxLsRefsBytes,
      });
      warnings.push(...followed.warnings);
      // A tag moved on the server since the pack was made may name an object that did not come: it waits.
      const inPack = new Set(pack.objects.map((o) => o.oid));
      for (const ref of followed.refs) {
        const oid = ref.oid!;
        if (inPack.has(oid) || packSet.has(oid)) plan({ ...ref, oid }, ref.name);
      }
      throwIfAborted(signal);
    }
  }

  let updates: { name: string; old: string | null; value: PackedRef }[] = [];
  let shallowAfter = shallowBefore;
  const storeFetched = async (target: RepoHandle) => {
    // Refs as they are now, then as they will be.
    const fs = target.fs.promises;
    const packedText = await fs.readFile(`${GITDIR}/packed-refs`, 'utf8').catch(() => '');
    const packed = new Map(parsePackedRefs(packedText as string).map((r) => [r.name, r]));
    updates = [];
    const before = await readLocalRefs(target);
    for (const { remote, local } of planned) {
      const old = before.get(local)?.oid ?? null;
      if (old === remote.oid) continue;
      updates.push({ name: local, old, value: { name: local, oid: remote.oid, peeled: remote.peeled } });
    }
    for (const u of updates) packed.set(u.name, u.value);
    shallowAfter = shallowBefore;
    if (shallowInfo) {
      const gone = new Set(shallowInfo.unshallow);
      shallowAfter = [
        ...new Set([...shallowBefore.filter((s) => !gone.has(s)), ...shallowInfo.shallow]),
      ].sort();
    }
    const shallowChanged = shallowAfter.join() !== shallowBefore.join();
    const storedShallow = shallowAfter;

    throwIfAborted(signal);
    onProgress?.({ phase: 'writing' });
    const promisorNote = filter
      ? planned.map((p) => `${p.remote.oid} ${p.remote.name}\n`).join('')
      : undefined;
    if (pack || updates.length > 0 || shallowChanged) {
      // A pack merge started by a lazy fetch writes to the same file system: not inside this batch. Under
      // the repo's lock (the API's fetch) none can run, and waiting for a deferred one would deadlock.
      if (!store.locks.heldHereNow(repoId)) await maintenanceIdle(ctx, repoId);
      const stored = pack;
      try {
        await store.repoFs.writeAllOrNothing(repoId, async () => {
          if (stored) {
            await writePack(fs, {
              checksum: stored.checksum,
              pack: stored.pack,
              idx: stored.idx,
              promisor: promisorNote,
            });
          }
          if (updates.length > 0) {
            const names = updates.map((u) => u.name);
            await writePackedRefs(fs, [...packed.values()], names);
          }
          if (shallowChanged) await writeShallow(fs, storedShallow);
          await store.crash.at('fetch:files-written');
          throwIfAborted(signal);
        });
      } catch (err) {
        // The discard dropped whatever else was written meanwhile: reread what is stored.
        store.forgetRepo(repoId);
        ctx.repos.forget(repoId);
        if (signal?.aborted) throw abortedError();
        throw err;
      }
      // The record follows the files: a crash in between leaves its `shallow` behind, which startup
      // repair (store/repair.ts) brings in line with the shallow file.
      await store.crash.at('fetch:files-committed');
      if (stored) (await store.packs.for(repoId)).add(stored.checksum, stored.idx, filter !== null);
    }
    await store.registry.update(repoId, (r) => ({
      ...r,
      shallow: storedShallow.length > 0,
      bytesFetched: (r.bytesFetched ?? 0) + client.bytesReceived,
      sizeBytes: r.sizeBytes + (pack ? pack.pack.length + pack.idx.length : 0),
      lastFetchedAt: Date.now(),
      // Learnt anew at every fetch: a repository moved back or elsewhere is not asked at the old place again.
      ...(r.movedTo || client.movedOnOrigin ? { movedTo: client.movedOnOrigin } : {}),
      ...(tags === 'all' ? { tagsListedAt: Date.now() } : {}),
    }));
    // New history (or the history fill's last step unshallowing the repo): the commit-graph's new layer.
    if (storedShallow.length === 0 && (pack?.counts.commit || shallowChanged))
      await commitGraphAfterStore(ctx, repoId);
  };
  if (storing.lockToStore) {
    await store.locks.withRepoLock(
      repoId,
      storing.lockToStore.what,
      async () => {
        const target = await openRepo(ctx, repoId);
        const now = await readShallow(target);
        if (now.join() !== shallowBefore.join()) {
          throw new OperationError(
            'FETCH_STALE',
            'The repository changed while its history was fetched; nothing was stored, and the next fetch asks again.',
          );
        }
        await storeFetched(target);
      },
      { signal },
    );
  } else {
    await storeFetched(repo);
  }

  const updated: RefUpdate[] = [];
  for (const u of updates) {
    let kind: RefUpdate['kind'] = 'new';
    if (u.old !== null) {
      if (u.name.startsWith('refs/tags/')) kind = 'tag-moved';
      else kind = (await isAncestor(repo, u.old, u.value.oid)) ? 'fast-forward' : 'forced';
    }
    updated.push({ name: u.name, old: u.old, new: u.value.oid, kind });
  }
  return {
    tags,
    updated,
    forced: updated.filter((u) => u.kind === 'forced' || u.kind === 'tag-moved'),
    newCommits: pack?.counts.commit ?? 0,
    objects: pack?.counts ?? { commit: 0, tree: 0, blob: 0, tag: 0 },
    completedFromLocal: pack?.appendedBases ?? 0,
    bytesReceived: client.bytesReceived,
    requests: client.requests,
    negotiation,
    shallow: shallowAfter.length > 0,
    filter,
    warnings,
  };
}

interface NegotiationInput {
  wants: string[];
  /** Every commit or tag the remote's refs name: the ones we hold are known to be common. */
  remoteOids: string[];
  shallow: string[];
  deepen?: number;
  deepenRelative: boolean;
  filter: string | null;
  tags: FetchTags;
  agent?: string;
  negotiation: { rounds: number; haves: number };
  hooks: OperationHooks<FetchProgress>;
}

/**
 * The fetch rounds (gitprotocol-v2: fetch): each request repeats the wants, the haves the server already
 * ACKed, and the next batch of haves; the server answers with acknowledgments only, until it says `ready`
 * (or we send `done`), and then with the pack in the same response.
 */
async function negotiateAndReceive(
  ctx: BlobContext,
  repo: RepoHandle,
  client: GitHttpClient,
  input: NegotiationInput,
): Promise<{ pack: IngestedPack; shallowInfo: { shallow: string[]; unshallow: string[] } | null }> {
  const { signal, onProgress } = input.hooks;
  const negotiator = new SkippingNegotiator(commitReader(repo), input.shallow);
  const packSet = await ctx.store.packs.for(repo.id);
  for (const oid of new Set(input.remoteOids)) {
    if (packSet.has(oid)) await negotiator.knownCommon(oid);
  }
  for (const tip of await localTips(repo)) await negotiator.addTip(tip);

  const common: string[] = [];
  const commonSet = new Set<string>();
  let batch = INITIAL_HAVES;
  let inVain = 0;
  let seenAck = false;
  for (;;) {
    throwIfAborted(signal);
    const fresh = await negotiator.next(batch);
    inVain += fresh.length;
    const done = fresh.length === 0 || (seenAck && inVain >= MAX_IN_VAIN);
    const haves = [...common, ...fresh];
    input.negotiation.rounds++;
    input.negotiation.haves += haves.length;
    onProgress?.({ phase: 'negotiating', round: input.negotiation.rounds, haves: input.negotiation.haves });
    const request = buildFetchRequest({
      wants: input.wants,
      haves,
      done,
      thinPack: true,
      noProgress: !onProgress,
      includeTag: input.tags !== 'none',
      ofsDelta: true,
      shallow: input.shallow,
      deepen: input.deepen,
      deepenRelative: input.deepenRelative,
      filter: input.filter ?? undefined,
      agent: input.agent,
    });
    const { acknowledgments, shallowInfo, ingester } = await receivePack(client, request, {
      limits: ctx.settings.limits,
      signal,
      onPackProgress: (p) => onProgress?.(p),
      onRemoteProgress: onProgress,
      externalBase: (oid) => readLocalObject(ctx, repo, oid, signal),
    });
    for (const oid of acknowledgments?.acks ?? []) {
      if (commonSet.has(oid)) continue;
      commonSet.add(oid);
      common.push(oid);
      if (!negotiator.ack(oid)) {
        inVain = 0;
        seenAck = true;
      }
    }
    const ready = acknowledgments?.ready ?? false;
    if (done || ready) {
      if (!ingester) {
        throw new OperationError('NOT_GIT', `${client.url.href} ended its fetch response without a pack.`);
      }
      const pack = await ingester.finish();
      return { pack, shallowInfo };
    }
    batch = nextHaveBatch(batch);
  }
}

function commitReader(repo: RepoHandle) {
  return async (oid: string) => {
    try {
      const { commit } = await git.readCommit({ fs: repo.fs, gitdir: repo.gitdir, oid, cache: repo.cache });
      return { parents: commit.parent, time: commit.committer.timestamp };
    } catch {
      // Not stored (beyond a shallow boundary) or not a commit: no line of history to walk.
      return null;
    }
  };
}

/**
 * Every local ref's commit: branches, remote-tracking branches, tags (peeled) and HEAD. A packed ref's
 * peeled value is taken as it is (the negotiator skips what is not a commit); others are peeled here.
 */
async function localTips(repo: RepoHandle): Promise<string[]> {
  const { fs, gitdir } = repo;
  const tips = new Set<string>();
  const toPeel = new Set<string>();
  const head = await git.resolveRef({ fs, gitdir, ref: 'HEAD' }).catch(() => null);
  if (head) toPeel.add(head);
  for (const [name, ref] of await readLocalRefs(repo)) {
    if (!/^refs\/(?:heads|remotes|tags)\//.test(name)) continue;
    if (ref.peeled) tips.add(ref.peeled);
    else toPeel.add(ref.oid);
  }
  for (const oid of toPeel) {
    const commit = await peel(repo, oid);
    if (commit) tips.add(commit);
  }
  return [...tips];
}

async function peel(repo: RepoHandle, oid: string): Promise<string | null> {
  // Not stored (beyond a shallow boundary, say) counts as no commit, as another kind of object does.
  return peelTags(repo, oid).catch(() => null);
}

/** A thin pack's delta base, from this repo; a promisor repo fetches it first if a filter left it out. */
async function readLocalObject(ctx: BlobContext, repo: RepoHandle, oid: string, signal?: AbortSignal) {
  const read = async () => {
    const { type, object } = await git.readObject({
      fs: repo.fs,
      gitdir: repo.gitdir,
      oid,
      format: 'content',
      cache: repo.cache,
    });
    return { type: type as GitObjectType, data: object as Uint8Array };
  };
  try {
    return await read();
  } catch {
    if (!repo.record.filter) return null;
  }
  await ensureBlobs(ctx, repo.id, [oid], { signal });
  return read().catch(() => null);
}

/** Whether `ancestor` is reachable from `descendant` through stored commits. */
async function isAncestor(repo: RepoHandle, ancestor: string, descendant: string): Promise<boolean> {
  const read = commitReader(repo);
  const seen = new Set<string>([descendant]);
  const queue = [descendant];
  const limit = (await read(ancestor))?.time;
  while (queue.length > 0) {
    const oid = queue.pop()!;
    if (oid === ancestor) return true;
    const commit = await read(oid);
    if (!commit) continue;
    // Commits older than the ancestor (with a day for clock skew) cannot lead to it.
    if (limit !== undefined && commit.time < limit - 86_400) continue;
    for (const p of commit.parents) {
      if (!seen.has(p)) {
        seen.add(p);
        queue.push(p);
      }
    }
  }
  return false;
}

/** The shallow boundary's commits, sorted: what a fetch sends as `shallow` lines and compares. */
async function readShallow(repo: RepoHandle): Promise<string[]> {
  return [...(await shallowCommits(repo))].sort();
}

async function readRemoteConfig(repo: RepoHandle): Promise<{ refspecs: Refspec[]; filter: string | null }> {
  const { fs, gitdir } = repo;
  const specs = (await git.getConfigAll({ fs, gitdir, path: 'remote.origin.fetch' })) as string[];
  const filter = (await git.getConfig({ fs, gitdir, path: 'remote.origin.partialclonefilter' })) as
    | string
    | undefined;
  return {
    refspecs: specs.map((s) => parseRefspec(String(s))).filter((r): r is Refspec => r !== null),
    filter: filter ? String(filter) : null,
  };
}

/**
 * How many haves the round after one of `batch` sends: doubled up to LARGE_FLUSH, then a tenth more, as git's
 * next_flush (fetch-pack.c) for stateless HTTP. Apart from its loop, so that the growth past LARGE_FLUSH, which
 * only a negotiation past 32,752 haves reaches, is tested on its own.
 */
export function nextHaveBatch(batch: number): number {
  return batch < LARGE_FLUSH ? batch * 2 : Math.floor((batch * 11) / 10);
}
