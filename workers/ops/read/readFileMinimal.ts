// One file (or folder) of a remote repository with the fewest bytes git's protocol allows, for the widget:
// no clone. `ls-refs` for the one ref, then `fetch` of that commit with `deepen 1` and a filter, then the
// trees along the path that filter left out, then the one blob. Every reply is kept as a promisor pack in a
// repo of its own, keyed by URL: a shallow partial repository git itself reads (shallow file, promisor packs),
// so a second view costs only the ref look-up and what it did not fetch before. See docs/ARCHITECTURE.md,
// "The minimal fetch", for the measurements that chose MINIMAL_STRATEGY.

import git from 'isomorphic-git';
import { isBinary } from '../../diff/binaryContent.ts';
import { isSha1HexAnyCase } from '../../model/objectId.ts';
import { isValidRefName } from '../../model/refName.ts';
import { DEFAULT_FETCH_REFSPEC } from '../../model/refspec.ts';
import { parseShallow } from '../../model/shallow.ts';
import { sha1, toHex } from '../../pack/objectHash.ts';
import { MODE_GITLINK, MODE_TREE_PADDED as MODE_TREE } from '../../pack/treeCheck.ts';
import { writeGitDirBase, writeHead, writeLooseRefs, writePack, writeShallow } from '../../store/gitDir.ts';
import { du, GITDIR, type PromiseFs } from '../../store/repoFs.ts';
import { GitHttpClient, repoName } from '../../transport/gitHttp.ts';
import { agentFor, parseInfoRefs, type V2Capabilities } from '../../wire/capabilities.ts';
import { RemoteError } from '../../wire/errors.ts';
import { buildFetchRequest } from '../../wire/fetchCommand.ts';
import type { RemoteRef } from '../../wire/lsRefs.ts';
import { lookupParts, readCheckedTree, type TreeReader } from '../common/checkedTrees.ts';
import { connect, type OpsContext } from '../common/engineContext.ts';
import { abortedError, OperationError, throwIfAborted } from '../common/errors.ts';
import { objectReadFs } from '../common/objectReadFs.ts';
import { type CloneLimits, cloneLimits } from '../sync/cloneLimits.ts';
import { type LsRefsAhead, lsRefsAhead, lsRefsCall } from '../sync/lsRefsCall.ts';
import { type ReceivedResponse, receivePack } from '../sync/receivePack.ts';
import type { FileContent } from './readFile.ts';

/**
 * What the commit's own request asks for; whatever it leaves out along the path is fetched one tree per
 * request (`want <tree>` with `filter tree:0`: a wanted object is always sent, nothing below it).
 *   commit-only  `tree:0`: the commit alone.
 *   root-tree    `tree:1`: the commit and its root tree (blobs at the root are at depth 1, so left out).
 *   top-trees    `combine:blob:none+tree:2`: and the trees of the root's folders (few, and small).
 *   two-levels   as top-trees, and each later request for a tree on the path also brings the trees of its
 *                folders (`combine:blob:none+tree:2` on a wanted tree), so one request covers two levels.
 *   path-trees   `combine:blob:none+tree:<n>` for a path of n parts: every tree down to the file's folder,
 *                siblings of the path's folders included.
 *   all-trees    `blob:none`: every tree of the commit, as a clone has.
 */
export type MinimalStrategy =
  | 'commit-only'
  | 'root-tree'
  | 'top-trees'
  | 'two-levels'
  | 'path-trees'
  | 'all-trees';

/*
 * Chosen by bench/minimalFetch.bench.ts: one file cold, deepest path of each fixture, median of 3; requests
 * include info/refs and ls-refs; "model" adds 50 ms per request and 20 Mbit/s to the loopback time.
 *
 *                 large.git (20,000 files, 6 deep)   small-sized.git (200 files)   features.git (22 deep)
 *                 req  bytes    model               req  bytes   model            req  bytes   model
 *   commit-only    10    8.1 KB  2.39 s               9   3.3 KB  1.22 s           26   3.1 KB  3.77 s
 *   root-tree       9    8.1 KB  2.27 s               8   3.2 KB  0.80 s           25   3.1 KB  2.79 s
 *   top-trees       8   22.4 KB  2.19 s               7   5.5 KB  0.73 s           24   3.5 KB  4.02 s
 *   two-levels      6   26.6 KB  1.45 s               5   6.7 KB  0.51 s           11   2.7 KB  1.04 s
 *   path-trees      4  778.9 KB  1.56 s               4   8.4 KB  0.46 s            4   2.4 KB  0.47 s
 *   all-trees       4  778.9 KB  1.51 s               4   8.4 KB  0.41 s            4   2.4 KB  0.36 s
 *
 * two-levels halves the requests for a few kilobytes of sibling trees, and stays at 0.07 % of a clone:
 * docs/decisions/minimal-fetch-strategy.md.
 */
export const MINIMAL_STRATEGY: MinimalStrategy = 'two-levels';

export interface ReadMinimalOptions {
  corsProxy?: string;
  /** Overrides MINIMAL_STRATEGY; for the benchmark. */
  strategy?: MinimalStrategy;
  /** Caps on what the server may make the read cost (pack, trees), as a clone's; defaults where absent. */
  limits?: Partial<CloneLimits>;
}

/** What readFileMinimal tells onProgress: once connecting, then before and after each request. */
export type MinimalProgress =
  | {
      /** Asking the server for its capabilities and the ref. */
      phase: 'connecting';
    }
  | {
      /** A request for what is not stored yet. */
      phase: 'fetching';
      /** What the request is for: the commit (with its top trees), a tree on the path, or the file. */
      what: 'commit' | 'tree' | 'blob';
      /** HTTP requests of this call so far. */
      requests: number;
      /** Response bytes of this call so far. */
      bytes: number;
    };

export interface MinimalHooks {
  onProgress?: (p: MinimalProgress) => void;
  signal?: AbortSignal;
}

/** One entry of a folder read by readFileMinimal. */
export interface MinimalEntry {
  /** Its name in the folder. */
  name: string;
  /** Octal mode as isomorphic-git gives it: 040000 (folder), 100644, 100755, 120000, 160000. */
  mode: string;
  /** The tree, blob or (for a submodule) commit it names. */
  oid: string;
  /** What it names: a folder, a file or symlink, or a submodule's commit. */
  type: 'tree' | 'blob' | 'commit';
}

/** What readFileMinimal read: a file's content or a folder's entries, and what that cost. */
export interface MinimalRead {
  /** The repo the objects were stored in (`minimal-…`, one per URL). */
  repoId: string;
  /** The repository's URL as requested (normalized: scheme, host, path). */
  url: string;
  /** As asked: a branch, tag, full commit id, or empty for the remote's HEAD. */
  ref: string;
  /** The full ref name it resolved to (`refs/heads/main`), or null when a commit id was given. */
  refName: string | null;
  /** The commit read. */
  commit: string;
  /** The path without leading or trailing slashes; empty for the root folder. */
  path: string;
  /** Whether `path` is a file (then `file` is set) or a folder (then `entries` is). */
  kind: 'file' | 'folder';
  /** The file's content, when `kind` is `file`. */
  file?: FileContent;
  /** The folder's entries in git's tree order, when `kind` is `folder`. */
  entries?: MinimalEntry[];
  /** What this call cost on the network. */
  network: {
    /** HTTP requests made, the capabilities and ref look-ups included. */
    requests: number;
    /** Response bytes received. */
    bytes: number;
  };
}

/** A tree and the trees of its folders, no blobs (list-objects-filter.c: depth counts from each root). */
const TWO_LEVELS = 'combine:blob:none+tree:2';

/** The repo id minimal reads of `url` share: readable, and the same in every worker of the profile. */
export function minimalRepoId(url: string): string {
  const href = new GitHttpClient(url).url.href;
  const slug = repoName(new URL(href))
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .slice(0, 40);
  return `minimal-${slug}-${toHex(sha1(new TextEncoder().encode(href))).slice(0, 12)}`;
}

/**
 * Reads `path` (a file or a folder; empty for the root) of `ref` at `url`, fetching only what the stored
 * objects lack. Throws REF_NOT_FOUND, PATH_NOT_FOUND, IS_SUBMODULE, UNSUPPORTED_PROTOCOL, HostileTreeError
 * (HOSTILE_TREE) for a tree on the way that git fsck would refuse, or the transport's
 * typed errors; a cancelled call throws ABORTED. Each reply is stored whole or not at all.
 */
export async function readFileMinimal(
  ctx: OpsContext,
  url: string,
  ref: string,
  path: string,
  options: ReadMinimalOptions = {},
  hooks: MinimalHooks = {},
): Promise<MinimalRead> {
  const { signal, onProgress } = hooks;
  throwIfAborted(signal);
  const limits = cloneLimits(ctx, options);
  const parts = pathParts(path, limits);
  const { store } = ctx;
  const client = connect(ctx, url, { corsProxy: options.corsProxy, signal, protocol: 'version=2' });
  const repoId = minimalRepoId(url);
  onProgress?.({ phase: 'connecting' });
  const names = refNames(ref.trim());
  // The GET goes out at once. ls-refs goes out with it, its answer used only if the advertisement allows
  // (lsRefsAhead), to where an earlier read of this URL found the repository moved on its host
  // (RepoRecord.movedTo), read meanwhile: the address given would answer 301.
  const asked = capabilities(client);
  asked.catch(() => undefined);
  const movedTo = names ? (await store.registry.get(repoId).catch(() => undefined))?.movedTo : undefined;
  const ahead = names ? lsRefsAhead(client, names, limits.maxLsRefsBytes, movedTo) : undefined;
  const caps = await asked;
  const target = await resolveRemoteRef(client, caps, ref.trim(), limits.maxLsRefsBytes, ahead);
  throwIfAborted(signal);

  const fetchCaps = caps.commands.get('fetch') ?? new Set<string>();
  // Without `filter` the commit's request brings its whole snapshot: more bytes, and still correct.
  const filtered = fetchCaps.has('filter');
  const strategy = options.strategy ?? MINIMAL_STRATEGY;
  const result = await store.locks.withRepoLock(
    repoId,
    'reading a file of the remote',
    async () => {
      store.repoFs.allowRecreate(repoId);
      const fs = store.repoFs.open(repoId).promises;
      const repo: Store = {
        ctx,
        repoId,
        fs,
        cache: {},
        // Every tree is checked as git fsck would before its entries are used (checkedTrees.ts).
        trees: {
          objectFs: objectReadFs(store.repoFs.open(repoId)),
          gitdir: GITDIR,
          cache: {},
          checkedTrees: new Set<string>(),
          treeLimits: limits,
        },
        limits,
        client,
        caps,
        hooks,
      };
      await ensureGitDir(repo, client.url.href);
      const packSet = await store.packs.for(repoId);
      if (!packSet.has(target.commit)) {
        const shallow = await fetchPack(repo, 'commit', [target.commit], {
          deepen: fetchCaps.has('shallow') ? 1 : undefined,
          filter: filtered ? commitFilter(strategy, parts.length) : undefined,
          // As git clone --filter writes it: the ref the pack was fetched for, if there was one.
          promisor: target.refName ? `${target.commit} ${target.refName}\n` : '',
        });
        // A server may answer with a pack that lacks the very commit it named (a hostile one does).
        if (!packSet.has(target.commit)) {
          throw new OperationError(
            'REF_NOT_FOUND',
            `${client.url.href} did not send the commit ${target.commit.slice(0, 10)}… it named for ${ref || 'HEAD'}.`,
          );
        }
        await addShallow(fs, shallow);
      }
      const commit = await git.readCommit({ fs, gitdir: GITDIR, oid: target.commit, cache: repo.cache });
      await updateRefs(fs, target.commit, target.refName);
      const treeFilter = filtered ? (strategy === 'two-levels' ? TWO_LEVELS : 'tree:0') : null;
      const read = await walk(repo, commit.commit.tree, parts, ref || 'HEAD', treeFilter);
      throwIfAborted(signal);
      await store.repoFs.flush(repoId);
      await record(ctx, repoId, client, options.corsProxy, target.commit);
      return read;
    },
    { signal },
  );
  return {
    repoId,
    url: client.url.href,
    ref,
    refName: target.refName,
    commit: target.commit,
    path: parts.join('/'),
    ...result,
    network: { requests: client.requests, bytes: client.bytesReceived },
  };
}

interface Store {
  ctx: OpsContext;
  repoId: string;
  fs: PromiseFs;
  cache: object;
  trees: TreeReader;
  limits: CloneLimits;
  client: GitHttpClient;
  caps: V2Capabilities;
  hooks: MinimalHooks;
}

function pathParts(path: string, limits: CloneLimits): string[] {
  const clean = path.replace(/^\/+|\/+$/g, '');
  if (clean === '') return [];
  // Before any request: no tree that deep is read, so there is nothing to fetch for it.
  const parts = lookupParts(clean, limits);
  if (parts.some((p) => p === '' || p === '.' || p === '..')) {
    throw new OperationError('PATH_NOT_FOUND', `"${path}" is not a path inside a repository.`);
  }
  return parts;
}

function commitFilter(strategy: MinimalStrategy, depth: number): string {
  switch (strategy) {
    case 'commit-only':
      return 'tree:0';
    case 'root-tree':
      return 'tree:1';
    case 'top-trees':
    case 'two-levels':
      return depth <= 1 ? 'tree:1' : TWO_LEVELS;
    case 'path-trees':
      // list-objects-filter.c: tree:<n> keeps trees and blobs less than n deep (the root tree is 0 deep),
      // blob:none drops the blobs among them; an object passes a combine: filter only if all its parts pass.
      return depth <= 1 ? 'tree:1' : `combine:blob:none+tree:${depth}`;
    case 'all-trees':
      return 'blob:none';
  }
}

async function capabilities(client: GitHttpClient): Promise<V2Capabilities> {
  const advertisement = parseInfoRefs(await client.infoRefs('git-upload-pack'));
  if (advertisement.version !== 2) {
    throw new OperationError(
      'UNSUPPORTED_PROTOCOL',
      `${client.url.href} speaks only git protocol v${advertisement.version}; showing one file without a clone needs protocol v2 (git 2.18 or later on the server). Open it in Blobless to clone it instead.`,
    );
  }
  const caps = advertisement.capabilities;
  if (caps.objectFormat !== 'sha1') {
    throw new OperationError(
      'UNSUPPORTED_OBJECT_FORMAT',
      `${client.url.href} uses ${caps.objectFormat} object ids; Blobless reads SHA-1 repositories only.`,
    );
  }
  return caps;
}

/** The ref names `ref` may be, in the order they win; null for a commit id, which needs no ls-refs. */
function refNames(ref: string): string[] | null {
  if (isSha1HexAnyCase(ref)) return null;
  return ref === '' || ref === 'HEAD'
    ? ['HEAD']
    : ref.startsWith('refs/')
      ? [ref]
      : [`refs/heads/${ref}`, `refs/tags/${ref}`];
}

/** A commit id as given, or the one ref asked for (gitprotocol-v2: ls-refs, ref-prefix). */
async function resolveRemoteRef(
  client: GitHttpClient,
  caps: V2Capabilities,
  ref: string,
  maxLsRefsBytes: number,
  ahead?: LsRefsAhead,
): Promise<{ commit: string; refName: string | null }> {
  const names = refNames(ref);
  if (!names) return { commit: ref.toLowerCase(), refName: null };
  // A prefix also matches longer names (refs/heads/main-old): only an exact name counts.
  const refs = await lsRefsCall(client, caps, names, {
    agent: agentFor(caps),
    maxBytes: maxLsRefsBytes,
    ahead,
  });
  for (const name of names) {
    const found = refs.find((r): r is RemoteRef & { oid: string } => r.name === name && r.oid !== null);
    if (found) {
      const refName = name === 'HEAD' ? (found.symrefTarget ?? null) : name;
      return { commit: found.peeled ?? found.oid, refName };
    }
  }
  const hint = /^[0-9a-f]{4,39}$/i.test(ref)
    ? ' A commit must be given by its full 40-digit id: the protocol cannot look up an abbreviated one.'
    : '';
  throw new OperationError(
    'REF_NOT_FOUND',
    ref === '' || ref === 'HEAD'
      ? `${client.url.href} has no commits yet.`
      : `${client.url.href} has no branch or tag named "${ref}".${hint}`,
  );
}

/** Walks from the root tree along `parts`, fetching each missing tree, then the blob at the end. */
async function walk(
  repo: Store,
  rootTree: string,
  parts: string[],
  ref: string,
  /** How a missing tree is asked for; null when the server cannot filter (then every tree is here). */
  treeFilter: string | null,
): Promise<Pick<MinimalRead, 'kind' | 'file' | 'entries'>> {
  const shown = parts.join('/');
  const notFound = () =>
    new OperationError('PATH_NOT_FOUND', `There is no file or folder "${shown}" in ${ref}.`);
  let current = { oid: rootTree, mode: MODE_TREE };
  let prefix = '';
  for (let depth = 0; depth < parts.length; depth++) {
    const name = parts[depth];
    if (current.mode !== MODE_TREE) throw notFound();
    const tree = await readTree(repo, current.oid, prefix, depth, treeFilter);
    const entry = tree.find((e) => e.name === name);
    if (!entry) throw notFound();
    current = { oid: entry.oid, mode: entry.mode };
    prefix += `${name}/`;
  }
  if (current.mode === MODE_TREE) {
    const tree = await readTree(repo, current.oid, prefix, parts.length, treeFilter);
    return {
      kind: 'folder',
      entries: tree.map((e) => ({
        name: e.name,
        mode: e.mode,
        oid: e.oid,
        type: e.mode === MODE_TREE ? 'tree' : e.mode === MODE_GITLINK ? 'commit' : 'blob',
      })),
    };
  }
  if (current.mode === MODE_GITLINK) {
    throw new OperationError(
      'IS_SUBMODULE',
      `"${shown}" is a submodule in ${ref}: it points at commit ${current.oid.slice(0, 10)}… of another repository, and has no content here.`,
    );
  }
  await ensureObject(repo, 'blob', current.oid, undefined);
  const { blob } = await git.readBlob({ fs: repo.fs, gitdir: GITDIR, oid: current.oid, cache: repo.cache });
  const bytes = new Uint8Array(blob.buffer, blob.byteOffset, blob.byteLength);
  return {
    kind: 'file',
    file: { oid: current.oid, mode: current.mode, size: bytes.length, binary: isBinary(bytes), bytes },
  };
}

async function readTree(repo: Store, oid: string, path: string, depth: number, treeFilter: string | null) {
  // Too deep is refused before the tree is fetched.
  if (depth > repo.limits.maxTreeDepth) return readCheckedTree(repo.trees, oid, path, depth);
  if (treeFilter) await ensureObject(repo, 'tree', oid, treeFilter);
  return readCheckedTree(repo.trees, oid, path, depth);
}

async function ensureObject(
  repo: Store,
  what: 'tree' | 'blob',
  oid: string,
  filter: string | undefined,
): Promise<void> {
  const packSet = await repo.ctx.store.packs.for(repo.repoId);
  if (packSet.has(oid)) return;
  // A wanted object is always sent whatever the filter (rev-list --filter-provided-objects is off), so
  // tree:0 brings this tree and nothing it names.
  await fetchPack(repo, what, [oid], { filter, promisor: '' });
  if (!packSet.has(oid)) {
    throw new OperationError(
      'PATH_NOT_FOUND',
      `${repo.client.url.href} did not send the ${what} ${oid.slice(0, 10)}… it was asked for.`,
    );
  }
}

/** One `fetch` request; its pack is stored as a promisor pack. Returns the commits the server made shallow. */
async function fetchPack(
  repo: Store,
  what: 'commit' | 'tree' | 'blob',
  wants: string[],
  args: { deepen?: number; filter?: string; promisor: string },
): Promise<string[]> {
  const { client, hooks } = repo;
  const { signal, onProgress } = hooks;
  const report = () =>
    onProgress?.({ phase: 'fetching', what, requests: client.requests, bytes: client.bytesReceived });
  report();
  const request = buildFetchRequest({
    wants,
    done: true,
    ofsDelta: true,
    noProgress: true,
    deepen: args.deepen,
    filter: args.filter,
    agent: agentFor(repo.caps),
  });
  let received: ReceivedResponse;
  try {
    received = await receivePack(client, request, {
      limits: repo.limits,
      signal,
      onPackProgress: report,
    });
  } catch (err) {
    if (signal?.aborted) throw abortedError();
    if (err instanceof RemoteError && /not our ref|bad object|not found/i.test(err.remoteMessage)) {
      throw new OperationError(
        'REF_NOT_FOUND',
        `${client.url.href} has no ${what} ${wants[0]} (${err.remoteMessage}).`,
      );
    }
    throw err;
  }
  const { ingester, shallowInfo } = received;
  if (!ingester)
    throw new OperationError('NOT_GIT', `${client.url.href} sent no pack in its fetch response.`);
  const pack = await ingester.finish();
  throwIfAborted(signal);
  const packSet = await repo.ctx.store.packs.for(repo.repoId);
  if (pack.objects.length > 0 && !packSet.index(pack.checksum)) {
    await writePack(repo.fs, {
      checksum: pack.checksum,
      pack: pack.pack,
      idx: pack.idx,
      promisor: args.promisor,
    });
    packSet.add(pack.checksum, pack.idx, true);
  }
  report();
  return shallowInfo?.shallow ?? [];
}

/** A git directory git accepts as a shallow partial clone whose objects are all promised by origin. */
async function ensureGitDir(repo: Store, url: string): Promise<void> {
  const { fs } = repo;
  try {
    await fs.stat(`${GITDIR}/config`);
    return;
  } catch {
    // a new repo
  }
  // The config marks the directory as set up (HEAD follows once a commit is stored).
  await writeGitDirBase(fs, {
    description: `Files read by ${repo.ctx.settings.productName}`,
    config: { remote: { url, fetchRefspec: DEFAULT_FETCH_REFSPEC, partialCloneFilter: 'tree:0' } },
  });
}

async function addShallow(fs: PromiseFs, commits: string[]): Promise<void> {
  if (commits.length === 0) return;
  let existing: string[] = [];
  try {
    existing = parseShallow((await fs.readFile(`${GITDIR}/shallow`, 'utf8')) as string);
  } catch {
    // no shallow file yet
  }
  await writeShallow(fs, [...existing, ...commits]);
}

/**
 * HEAD (detached) at the last commit read, and the remote-tracking ref of a branch, so git sees every
 * stored commit as reachable. Tags are not written: their tag objects are not fetched.
 */
async function updateRefs(fs: PromiseFs, commit: string, refName: string | null): Promise<void> {
  const branch = refName?.startsWith('refs/heads/') ? refName.slice('refs/heads/'.length) : null;
  // The name came from the server (a symref target for HEAD): only one git itself accepts becomes a file.
  if (branch && isValidRefName(`refs/remotes/origin/${branch}`)) {
    await writeLooseRefs(fs, [{ name: `refs/remotes/origin/${branch}`, value: commit }]);
  }
  await writeHead(fs, { oid: commit });
}

async function record(
  ctx: OpsContext,
  repoId: string,
  client: GitHttpClient,
  corsProxy: string | undefined,
  commit: string,
) {
  const { store } = ctx;
  const fs = store.repoFs.open(repoId).promises;
  const previous = await store.registry.get(repoId);
  const now = Date.now();
  await store.registry.put({
    id: repoId,
    url: client.url.href,
    ...(client.movedOnOrigin ? { movedTo: client.movedOnOrigin } : {}),
    corsProxy,
    name: repoName(client.url),
    branch: null,
    headOid: commit,
    filter: 'tree:0',
    shallow: true,
    minimal: true,
    sizeBytes: await du(fs, GITDIR),
    bytesFetched: (previous?.bytesFetched ?? 0) + client.bytesReceived,
    createdAt: previous?.createdAt ?? now,
    lastFetchedAt: now,
  });
}
