import { isSha1HexAnyCase } from '../../model/objectId.ts';
import { DEFAULT_FETCH_REFSPEC, formatRefspec } from '../../model/refspec.ts';
import { parsePackIndexV2 } from '../../pack/packIndex.ts';
import { writeNewGitDir, writePackFile } from '../../store/gitDir.ts';
import type { PackedRef } from '../../store/packedRefs.ts';
import { du, GITDIR } from '../../store/repoFs.ts';
import { TransportError } from '../../transport/errors.ts';
import type { GitHttpClient } from '../../transport/gitHttp.ts';
import { repoName } from '../../transport/gitHttp.ts';
import { diagnoseUnreachable } from '../../transport/reachability.ts';
import { agentFor, parseInfoRefs } from '../../wire/capabilities.ts';
import { buildFetchRequest } from '../../wire/fetchCommand.ts';
import type { RemoteRef } from '../../wire/lsRefs.ts';
import { connect } from '../common/engineContext.ts';
import { abortedError, OperationError, throwIfAborted } from '../common/errors.ts';
import type { OperationHooks } from '../common/operationHooks.ts';
import { type Timeline, timeline } from '../common/timeline.ts';
import { commitGraphInBackground } from '../maintenance/commitGraphUpdate.ts';
import type { MaintenanceContext } from '../maintenance/packMaintenance.ts';
import { cloneLimits, treeLimitsGiven } from './cloneLimits.ts';
import type { ClonedRef, CloneOptions, CloneProgress, CloneResult } from './cloneTypes.ts';
import { cloneWithProtocolV1 } from './cloneV1.ts';
import { checkDepth } from './depthOptions.ts';
import { type LsRefsAhead, lsRefsAhead, lsRefsCall } from './lsRefsCall.ts';
import { receivePack } from './receivePack.ts';
import { checkRemoteRefNames } from './remoteRefNames.ts';

export type { OperationHooks } from '../common/operationHooks.ts';
export type { ClonedRef, CloneFilter, CloneOptions, CloneProgress, CloneResult } from './cloneTypes.ts';

/** Clones into a new repo; on any failure the half-made repo is deleted so nothing of it remains. */
export async function clone(
  ctx: MaintenanceContext,
  opts: CloneOptions,
  hooks: OperationHooks<CloneProgress> = {},
): Promise<CloneResult> {
  const { signal, onProgress } = hooks;
  const { store } = ctx;
  checkDepth(opts.depth);
  // git clone: --depth implies --single-branch unless --no-single-branch is given (builtin/clone.c).
  opts = { ...opts, singleBranch: opts.singleBranch ?? opts.depth !== undefined };
  const limits = cloneLimits(ctx, opts);
  const connectTo = (corsProxy?: string) =>
    connect(ctx, opts.url, {
      corsProxy,
      auth: opts.auth,
      signal,
      protocol: 'version=2',
      onRetry: ({ text, attempt, attempts, delayMs }) =>
        onProgress?.({ phase: 'retrying', text, attempt, attempts, delayMs }),
    });
  let client = connectTo(opts.corsProxy);
  let effective = opts;
  const notes: string[] = [];
  onProgress?.({ phase: 'connecting' });
  const steps = timeline(ctx, 'clone');
  steps.clear();
  const cloneStart = performance.now();
  const fallback = opts.fallbackCorsProxy;
  // Never with credentials: the token was given for the git host, not for a proxy.
  const canFallBack = fallback && !opts.corsProxy && !opts.auth;
  // ls-refs goes out with the GET; cloneInto uses its answer only if the advertisement allows (lsRefsAhead).
  const prefixesAhead = refPrefixes(opts, (opts.tags ?? true) && !wantsFirstView(opts));
  let ahead = lsRefsAhead(client, prefixesAhead, limits.maxLsRefsBytes);
  // In a browser a host without CORS headers fails like a reset: with a proxy to fall back on, no waiting.
  const directAnswer = steps.step('info-refs', () =>
    client.infoRefs('git-upload-pack', limits.maxInfoRefsBytes, !canFallBack),
  );
  // Taken up under the lock below; until then a failure is not to be reported as unhandled.
  directAnswer.catch(() => undefined);

  /** The advertisement: the direct answer, or the proxy's when the host did not answer this page. */
  const advertised = async (): Promise<Uint8Array> => {
    try {
      return await directAnswer;
    } catch (err) {
      if (
        !(err instanceof TransportError && err.code === 'NETWORK_ERROR' && err.beforeResponse) ||
        opts.corsProxy
      )
        throw err;
      // A browser reports a missing host and a host without CORS headers alike ("Failed to fetch"). The
      // deployment's proxy is tried first, when there is one; when it cannot help either, the person hears
      // which of the two it was, and never about a proxy they did not choose.
      const diagnose = async (proxyErr?: unknown) => {
        if (signal?.aborted) return abortedError();
        // The browser's own words, the last parenthesis of the transport's message ("Failed to fetch").
        const said = /\(([^()]*)\)$/.exec(err.message)?.[1] ?? err.message;
        const why = await diagnoseUnreachable(client.url, said, { signal, fetch: ctx.settings.fetch });
        return signal?.aborted ? abortedError() : Object.assign(why, { cause: proxyErr ?? err });
      };
      if (!canFallBack) throw await diagnose();
      const direct = client;
      client = connectTo(fallback);
      effective = { ...opts, corsProxy: fallback };
      ahead = lsRefsAhead(client, prefixesAhead, limits.maxLsRefsBytes);
      notes.push(
        `${client.url.host} did not answer a direct request from this page (it most likely sends no CORS headers), so Blobless went through the CORS proxy at ${fallback}.`,
      );
      try {
        return await client.infoRefs('git-upload-pack', limits.maxInfoRefsBytes);
      } catch (proxyErr) {
        // The host's own answer, through the proxy (no such repository, a token needed): that is the news.
        const proxyFailed =
          proxyErr instanceof TransportError &&
          ['PROXY_REFUSED', 'NETWORK_ERROR', 'TIMEOUT'].includes(proxyErr.code);
        if (!proxyFailed) throw proxyErr;
        client = direct;
        throw await diagnose(proxyErr);
      }
    }
  };

  // The id names the address given, the same through the proxy and after a redirect (git keeps it too).
  const repoId = newRepoId(client.url);
  const lockAsked = performance.now();
  // Asked for while the GET is on its way, and held from before the database exists until the record is
  // written: startup repair in another tab sees a database without a record, and the held lock tells it
  // the clone is alive. Waiting for it after the GET cost a small clone 2 ms (clone-fixed-costs.md).
  return store.locks.withRepoLock(repoId, `clone of ${client.url.href}`, async () => {
    steps.measure('lock', lockAsked);
    let opened: Promise<void> | undefined;
    try {
      const advertisement = await advertised();
      // The new database is made and opened while ls-refs and the fetch wait on the network: on a small
      // clone that was 15-30 ms after the pack had arrived. Not alongside the GET, which it slowed by about
      // as much as it saved (docs/decisions/clone-fixed-costs.md).
      opened = store.repoFs.prepare(repoId);
      // git says "warning: redirecting to …" and keeps the address given; so do we.
      if (client.redirectedTo) notes.push(`${client.url.href} redirected to ${client.redirectedTo.href}.`);
      const result = await cloneInto(
        ctx,
        steps,
        repoId,
        client,
        advertisement,
        effective,
        hooks,
        ahead,
        opened,
      );
      steps.measure('total', cloneStart);
      return { ...result, warnings: [...notes, ...result.warnings] };
    } catch (err) {
      // Nothing was made before the GET answered (a wrong address, say): nothing to remove.
      if (opened) {
        // Opened first: a delete while the database is still being opened could see it made again after.
        await opened;
        await store.repoFs.delete(repoId).catch(() => undefined);
        await store.registry.remove(repoId).catch(() => undefined);
      }
      if (signal?.aborted) throw abortedError();
      throw err;
    }
  });
}

async function cloneInto(
  ctx: MaintenanceContext,
  steps: Timeline,
  repoId: string,
  client: GitHttpClient,
  infoRefs: Uint8Array,
  opts: CloneOptions,
  hooks: OperationHooks<CloneProgress>,
  ahead: LsRefsAhead,
  opened: Promise<void>,
): Promise<CloneResult> {
  const { signal, onProgress } = hooks;
  const { store } = ctx;
  const advertisement = parseInfoRefs(infoRefs);
  throwIfAborted(signal);
  if (advertisement.version !== 2) {
    return cloneWithProtocolV1(ctx, repoId, client, opts, hooks);
  }
  const caps = advertisement.capabilities;
  if (caps.objectFormat !== 'sha1') {
    // gitprotocol-v2: object-format. The pack and store layers hash with SHA-1 only.
    throw new OperationError(
      'UNSUPPORTED_OBJECT_FORMAT',
      `${client.url.href} uses ${caps.objectFormat} object ids; Blobless reads SHA-1 repositories only.`,
    );
  }
  const warnings: string[] = [];
  const fetchCaps = caps.commands.get('fetch') ?? new Set<string>();
  // The first view needs a shallow, filtered fetch; anything else the person chose is cloned as chosen.
  const firstView = wantsFirstView(opts) && fetchCaps.has('shallow') && fetchCaps.has('filter');
  const tags = opts.tags ?? true;

  const limits = cloneLimits(ctx, opts);
  // The first view lists the heads only (to find HEAD's branch); the fill lists the tags.
  const listed = await steps.step('ls-refs', () =>
    lsRefsCall(client, caps, refPrefixes(opts, tags && !firstView), {
      agent: agentFor(caps),
      maxBytes: limits.maxLsRefsBytes,
      ahead,
    }),
  );
  throwIfAborted(signal);
  const headTarget = listed.find((r) => r.name === 'HEAD')?.symrefTarget;
  const named = checkRemoteRefNames(listed, headTarget, client.url.href);
  warnings.push(...named.warnings);
  // One ref at depth 1 for the first view, but the normal clone's refspec: the fill fetches by it.
  const plan = firstView
    ? {
        ...planRefs(named.kept, { ...opts, singleBranch: true }, false, client.url.href),
        fetchRefspec: DEFAULT_FETCH_REFSPEC,
      }
    : planRefs(named.kept, opts, tags, client.url.href);

  let filter: string | null = opts.filter === undefined ? 'blob:none' : opts.filter;
  if (filter && !fetchCaps.has('filter')) {
    warnings.push(
      'The server does not support partial clone (no `filter` capability); cloned every file instead.',
    );
    filter = null;
  }
  let depth = firstView ? 1 : opts.depth;
  if (depth && !fetchCaps.has('shallow')) {
    warnings.push('The server does not support shallow clones; cloned the whole history instead.');
    depth = undefined;
  }

  const request = buildFetchRequest({
    wants: plan.wants,
    done: true,
    ofsDelta: true,
    // gitprotocol-v2: fetch: without a listener the server would spend bytes on progress text nobody reads.
    noProgress: !onProgress,
    includeTag: tags && !firstView,
    filter: filter ?? undefined,
    deepen: depth,
    agent: agentFor(caps),
  });
  const { ingester, shallowInfo } = await receivePack(client, request, {
    limits,
    signal,
    onPackProgress: (p) => onProgress?.(p),
    onRemoteProgress: onProgress,
    steps,
  });
  if (!ingester) {
    throw new OperationError('NOT_GIT', `${client.url.href} sent no pack in its fetch response.`);
  }
  const shallow = shallowInfo?.shallow ?? [];
  // Final once its trailer checks out: the pack goes to IndexedDB (staged ahead of the batch's commit,
  // store/batchedIdb.ts) while its deltas are resolved and its index written. Still one batch.
  const received = ingester.received();
  const fs = store.repoFs.open(repoId).promises;
  const promisor = filter ? plan.refs.map((r) => `${r.oid} ${r.name}\n`).join('') : undefined;
  await steps.step('open', () => opened);
  let writeStart = performance.now();
  let followed: ClonedRef[] = [];
  // One commit for the whole git directory: never a HEAD without its pack, nor the other way round.
  const pack = await store.repoFs.writeAllOrNothing(
    repoId,
    async () => {
      await writePackFile(fs, received.checksum, received.pack);
      const indexed = await steps.step('index', () => ingester.finish({ objects: false }));
      throwIfAborted(signal);
      onProgress?.({ phase: 'writing' });
      writeStart = performance.now();
      followed = followedTags(plan.followTags, indexed.idx);
      await writeNewGitDir(fs, {
        config: {
          remote: {
            url: client.url.href,
            fetchRefspec: plan.fetchRefspec,
            partialCloneFilter: filter ?? undefined,
          },
          branch: plan.branch ?? undefined,
        },
        description: `Cloned by ${ctx.settings.productName}`,
        head: plan.branch ? { branch: plan.branch } : { oid: plan.headOid },
        looseRefs: plan.looseRefs,
        packedRefs: [...plan.packedRefs, ...followed],
        shallow,
        pack: {
          checksum: indexed.checksum,
          pack: indexed.pack,
          idx: indexed.idx,
          promisor,
          packWritten: true,
        },
      });
      await store.crash.at('clone:files-written');
      return indexed;
    },
    { newDatabase: true },
  );
  steps.measure('write', writeStart);
  await steps.step('flush', () => store.repoFs.flush(repoId));
  throwIfAborted(signal);
  // Files first, then the record: a crash in between leaves a database no record names, which startup
  // repair deletes (the lock held by this clone tells it apart from one in progress).
  await store.crash.at('clone:files-committed');
  const now = Date.now();
  const recordStart = performance.now();
  await store.registry.put({
    id: repoId,
    url: client.url.href,
    ...(client.movedOnOrigin ? { movedTo: client.movedOnOrigin } : {}),
    corsProxy: opts.corsProxy,
    // GitHttpClient sent the token through the proxy only because the person agreed to this one.
    tokenProxy: opts.auth && opts.corsProxy ? opts.auth.proxy : undefined,
    auth: opts.auth && opts.rememberCredentials ? opts.auth : undefined,
    needsToken: opts.auth ? true : undefined,
    treeLimits: treeLimitsGiven(opts.limits),
    name: repoName(client.url),
    branch: plan.branch,
    headOid: plan.headOid,
    filter,
    shallow: shallow.length > 0,
    historyFill: firstView ? { depth: 1, commits: pack.counts.commit, bytes: 0 } : undefined,
    sizeBytes: await du(fs, GITDIR),
    bytesFetched: client.bytesReceived,
    createdAt: now,
    lastFetchedAt: now,
  });
  steps.measure('record', recordStart);
  if (opts.auth) store.credentials.rememberForSession(repoId, opts.auth);
  if (shallow.length === 0) commitGraphInBackground(ctx, repoId);
  return {
    repoId,
    head: { branch: plan.branch, oid: plan.headOid },
    refs: [...plan.refs, ...followed],
    objects: pack.counts,
    bytesReceived: client.bytesReceived,
    requests: client.requests,
    protocol: 2,
    filter,
    historyFillPending: firstView,
    warnings,
  };
}

/**
 * The tags of `candidates` whose object is in the pack `idx` indexes: what git clone keeps of a
 * single-branch clone's tags (write_followtags: every listed tag whose object it has). An annotated tag's
 * object is in the pack when include-tag brought it; a lightweight tag's when its commit was fetched.
 */
function followedTags(candidates: ListedRef[], idx: Uint8Array): ClonedRef[] {
  if (candidates.length === 0) return [];
  const index = parsePackIndexV2(idx, { verifyChecksum: false });
  return candidates
    .filter((t) => index.find(t.oid) !== null)
    .map((t) => ({ name: t.name, oid: t.oid, peeled: t.peeled }));
}

/** Whether the clone starts with a first view, if the server can (`shallow` and `filter`). */
function wantsFirstView(opts: CloneOptions): boolean {
  return (
    opts.firstView === true &&
    !opts.depth &&
    !opts.singleBranch &&
    (opts.filter === undefined || opts.filter === 'blob:none')
  );
}

/** Asks only for what the clone will keep (gitprotocol-v2: ls-refs, ref-prefix). */
function refPrefixes(opts: CloneOptions, tags: boolean): string[] {
  if (opts.singleBranch && opts.ref && !isOid(opts.ref)) {
    const ref = opts.ref.replace(/^refs\/(heads|tags)\//, '');
    // With tags, every one: git clone lists them all to keep those on what it fetched (followTags).
    return ['HEAD', `refs/heads/${ref}`, ...(tags ? ['refs/tags/'] : [`refs/tags/${ref}`])];
  }
  // A single-branch clone of the default branch still needs every head to learn which one HEAD names.
  return tags ? ['HEAD', 'refs/heads/', 'refs/tags/'] : ['HEAD', 'refs/heads/'];
}

interface RefPlan {
  wants: string[];
  branch: string | null;
  headOid: string;
  refs: ClonedRef[];
  looseRefs: { name: string; value: string }[];
  packedRefs: PackedRef[];
  fetchRefspec: string;
  /**
   * A single-branch clone's tags, not asked for: those whose object the pack brings (include-tag: the tags
   * on what was fetched) are kept, as git clone's write_followtags keeps them (followedTags).
   */
  followTags: ListedRef[];
}

/** A listed ref with an object id (not an unborn HEAD). */
type ListedRef = RemoteRef & { oid: string };

/** Decides HEAD and which refs to keep, the way `git clone` lays them out (remote-tracking refs, tags). */
export function planRefs(remote: RemoteRef[], opts: CloneOptions, tags: boolean, url: string): RefPlan {
  const withOid = remote.filter((r): r is RemoteRef & { oid: string } => r.oid !== null);
  const remoteHead = remote.find((r) => r.name === 'HEAD');
  const heads = withOid.filter((r) => r.name.startsWith('refs/heads/'));
  const listedTags = tags ? withOid.filter((r) => r.name.startsWith('refs/tags/')) : [];
  // A single-branch clone wants its branch only; the tags on its history come with it (followTags).
  const tagRefs = opts.singleBranch ? [] : [...listedTags];
  if (heads.length === 0 && listedTags.length === 0 && !(opts.ref && isOid(opts.ref))) {
    throw new OperationError(
      'EMPTY_REPOSITORY',
      `The repository at ${url} is empty: it has no commits yet, so there is nothing to clone.`,
    );
  }

  let branch: string | null = null;
  let headOid: string;
  if (opts.ref) {
    const ref = opts.ref.replace(/^refs\/(heads|tags)\//, '');
    const asBranch = heads.find((r) => r.name === `refs/heads/${ref}`);
    const asTag = withOid.find((r) => r.name === `refs/tags/${ref}`);
    if (asBranch) {
      branch = ref;
      headOid = asBranch.oid;
    } else if (asTag) {
      headOid = asTag.peeled ?? asTag.oid;
      if (!tagRefs.includes(asTag)) tagRefs.push(asTag);
    } else if (isOid(opts.ref)) {
      headOid = opts.ref.toLowerCase();
    } else {
      const known = heads.map((r) => r.name.slice('refs/heads/'.length)).slice(0, 10);
      throw new OperationError(
        'REF_NOT_FOUND',
        `The remote has no branch or tag named "${opts.ref}". Branches: ${known.join(', ') || 'none'}.`,
      );
    }
  } else if (remoteHead?.oid && !remoteHead.symrefTarget && !heads.some((r) => r.oid === remoteHead.oid)) {
    // A remote HEAD detached at a commit no branch holds: git clone detaches there too.
    headOid = remoteHead.oid;
  } else {
    const target = remoteHead?.symrefTarget;
    const byTarget = target ? heads.find((r) => r.name === target) : undefined;
    const fallback =
      byTarget ??
      heads.find((r) => r.oid === remoteHead?.oid) ??
      heads.find((r) => r.name === 'refs/heads/main') ??
      heads.find((r) => r.name === 'refs/heads/master') ??
      heads[0];
    if (!fallback) {
      throw new OperationError('REF_NOT_FOUND', `The remote's HEAD names no branch; choose a branch or tag.`);
    }
    branch = fallback.name.slice('refs/heads/'.length);
    headOid = fallback.oid;
  }

  const keptHeads = opts.singleBranch ? heads.filter((r) => r.name === `refs/heads/${branch}`) : heads;
  const refs: ClonedRef[] = [];
  if (remoteHead?.oid && (!opts.singleBranch || remoteHead.oid === headOid)) {
    refs.push({ name: 'HEAD', oid: remoteHead.oid });
  }
  for (const r of [...keptHeads, ...tagRefs]) refs.push({ name: r.name, oid: r.oid, peeled: r.peeled });

  const wants = [...new Set([...refs.map((r) => r.oid), headOid])];
  const packedRefs: PackedRef[] = [
    ...keptHeads.map((r) => ({
      name: `refs/remotes/origin/${r.name.slice('refs/heads/'.length)}`,
      oid: r.oid,
    })),
    ...tagRefs.map((r) => ({ name: r.name, oid: r.oid, peeled: r.peeled })),
  ];
  const looseRefs: { name: string; value: string }[] = [];
  if (branch) looseRefs.push({ name: `refs/heads/${branch}`, value: headOid });
  const remoteDefault = remoteHead?.symrefTarget?.replace(/^refs\/heads\//, '');
  if (remoteDefault && keptHeads.some((r) => r.name === `refs/heads/${remoteDefault}`)) {
    looseRefs.push({ name: 'refs/remotes/origin/HEAD', value: `ref: refs/remotes/origin/${remoteDefault}` });
  }
  const fetchRefspec =
    opts.singleBranch && branch
      ? formatRefspec({
          force: true,
          srcPrefix: `refs/heads/${branch}`,
          dstPrefix: `refs/remotes/origin/${branch}`,
          pattern: false,
        })
      : DEFAULT_FETCH_REFSPEC;
  const followTags = opts.singleBranch ? listedTags.filter((t) => !tagRefs.includes(t)) : [];
  return { wants, branch, headOid, refs, looseRefs, packedRefs, fetchRefspec, followTags };
}

function isOid(s: string): boolean {
  return isSha1HexAnyCase(s);
}

function newRepoId(url: URL): string {
  const slug = repoName(url)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .slice(0, 40);
  return `${slug}-${crypto.randomUUID().slice(0, 8)}`;
}
