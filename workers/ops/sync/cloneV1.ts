import type FS from '@isomorphic-git/lightning-fs';
import git, { type GitHttpRequest, type GitHttpResponse, type HttpClient } from 'isomorphic-git';
import { ZERO_OID } from '../../model/objectId.ts';
import { isValidRefName } from '../../model/refName.ts';
import { PackIngester } from '../../pack/packIngester.ts';
import { du, GITDIR, type PromiseFs } from '../../store/repoFs.ts';
import { TransportError } from '../../transport/errors.ts';
import {
  type GitHttpClient,
  isOffline,
  isRedirect,
  offlineError,
  repoName,
} from '../../transport/gitHttp.ts';
import { parseInfoRefs } from '../../wire/capabilities.ts';
import { concatBytes, encodePktLine, FLUSH_PKT, infoRefsCap, readAllCapped } from '../../wire/pktLine.ts';
import type { OpsContext } from '../common/engineContext.ts';
import { abortedError, OperationError } from '../common/errors.ts';
import type { OperationHooks } from '../common/operationHooks.ts';
import { cloneLimits, treeLimitsGiven } from './cloneLimits.ts';
import type { ClonedRef, CloneOptions, CloneProgress, CloneResult } from './cloneTypes.ts';
import { checkRemoteRefNames } from './remoteRefNames.ts';

/**
 * A server that does not speak protocol v2 gets a full clone through isomorphic-git's v1 path: slower and
 * with every blob, but it works, and the result says so.
 */
export async function cloneWithProtocolV1(
  ctx: OpsContext,
  repoId: string,
  client: GitHttpClient,
  opts: CloneOptions,
  hooks: OperationHooks<CloneProgress>,
): Promise<CloneResult> {
  const { signal, onProgress } = hooks;
  const { store } = ctx;
  const fs = store.repoFs.open(repoId);
  const url = client.url.href;
  let requests = client.requests;
  let bytes = client.bytesReceived;
  const warnings: string[] = [];
  const limits = cloneLimits(ctx, opts);
  const fetchFn = ctx.settings.fetch ?? fetch;
  const counting: HttpClient = {
    async request(req: GitHttpRequest) {
      // isomorphic-git's requests bypass GitHttpClient, so they get its offline check here.
      if (isOffline()) throw offlineError(client.url.host);
      requests++;
      const res = hasToken(req)
        ? await withoutRedirects(fetchFn, req, signal)
        : await request(fetchFn, { ...req, signal });
      const body = res.body;
      if (!body) return res;
      if (
        req.method === 'GET' &&
        /\/info\/refs\?service=git-upload-pack$/.test(req.url) &&
        res.statusCode === 200
      ) {
        const advertisement = await readAllCapped(counted(), infoRefsCap(limits.maxInfoRefsBytes));
        const checked = withCheckedRefNames(advertisement, url);
        warnings.push(...checked.warnings);
        return {
          ...res,
          body: (async function* () {
            yield checked.body;
          })(),
        };
      }
      async function* counted() {
        for await (const chunk of body as AsyncIterableIterator<Uint8Array>) {
          bytes += chunk.length;
          yield chunk;
        }
      }
      return { ...res, body: counted() };
    },
  };
  const tags = opts.tags ?? true;
  try {
    await git.clone({
      fs,
      http: counting,
      dir: '/',
      gitdir: GITDIR,
      // Where the info/refs GET before the fallback landed: the repository's one allowed move is taken.
      url: (client.redirectedTo ?? client.url).href,
      corsProxy: opts.corsProxy,
      ref: opts.ref,
      singleBranch: opts.singleBranch,
      depth: opts.depth,
      noCheckout: true,
      noTags: !tags,
      onAuth: opts.auth ? () => opts.auth : undefined,
      onProgress: (e) => {
        if (signal?.aborted) throw abortedError();
        if (e.phase.startsWith('Receiving')) {
          onProgress?.({ phase: 'receiving', bytes, objects: e.loaded, totalObjects: e.total ?? 0 });
        } else if (e.phase.startsWith('Resolving')) {
          onProgress?.({ phase: 'resolving', resolved: e.loaded, total: e.total ?? 0 });
        } else {
          onProgress?.({ phase: 'remote', text: e.phase, loaded: e.loaded, total: e.total });
        }
      },
    });
  } catch (err) {
    if (signal?.aborted) throw abortedError();
    const e = err as { code?: string; message?: string };
    if (e.code === 'NotFoundError' && /HEAD|ref/i.test(e.message ?? '')) {
      throw new OperationError('REF_NOT_FOUND', `The remote has no ref "${opts.ref ?? 'HEAD'}".`);
    }
    throw err;
  }
  // As git keeps it, and as the v2 clone writes it: the address given, not where it moved.
  if (client.redirectedTo) await git.setConfig({ fs, gitdir: GITDIR, path: 'remote.origin.url', value: url });
  await store.repoFs.flush(repoId);
  const pfs = fs.promises;
  const branch = (await git.currentBranch({ fs, gitdir: GITDIR })) ?? null;
  const headOid = await git.resolveRef({ fs, gitdir: GITDIR, ref: 'HEAD' });
  const refs: ClonedRef[] = [];
  for (const b of await git.listBranches({ fs, gitdir: GITDIR, remote: 'origin' })) {
    if (b === 'HEAD') continue;
    refs.push({
      name: `refs/heads/${b}`,
      oid: await git.resolveRef({ fs, gitdir: GITDIR, ref: `refs/remotes/origin/${b}` }),
    });
  }
  for (const t of tags ? await git.listTags({ fs, gitdir: GITDIR }) : []) {
    const oid = await git.resolveRef({ fs, gitdir: GITDIR, ref: `refs/tags/${t}` });
    const peeled = await peel(fs, oid);
    refs.push({ name: `refs/tags/${t}`, oid, peeled: peeled !== oid ? peeled : undefined });
  }
  const counts = await countObjects(pfs);
  const now = Date.now();
  await store.registry.put({
    id: repoId,
    url,
    needsToken: opts.auth ? true : undefined,
    treeLimits: treeLimitsGiven(opts.limits),
    name: repoName(client.url),
    branch,
    headOid,
    filter: null,
    shallow: !!opts.depth,
    sizeBytes: await du(pfs, GITDIR),
    createdAt: now,
    lastFetchedAt: now,
  });
  warnings.unshift(
    'The server does not speak git protocol v2, so this was a full clone with protocol v1: every file was downloaded.',
  );
  if (opts.filter !== null) warnings.push('Partial clone needs protocol v2; the filter was not applied.');
  return {
    repoId,
    head: { branch, oid: headOid },
    refs,
    objects: counts,
    bytesReceived: bytes,
    requests,
    protocol: 1,
    filter: null,
    historyFillPending: false,
    warnings,
  };
}

/**
 * The v0/v1 advertisement isomorphic-git will read, rebuilt without the refs whose names git refuses (and
 * without `symref=` capabilities naming one), since isomorphic-git writes every advertised ref as a file.
 * A bad HEAD target throws `HOSTILE_REF_NAME`. The advertisement is parsed by our strict reader first.
 */
export function withCheckedRefNames(body: Uint8Array, url: string): { body: Uint8Array; warnings: string[] } {
  const adv = parseInfoRefs(body);
  if (adv.version === 2) throw new OperationError('NOT_GIT', `${url} answered a protocol v0 request in v2.`);
  const { kept, warnings } = checkRemoteRefNames(adv.refs, adv.symrefs.HEAD, url);
  const capabilities = adv.capabilities.filter((token) => {
    if (!token.startsWith('symref=')) return true;
    const [from, to = ''] = token.slice('symref='.length).split(':');
    return (from === 'HEAD' || isValidRefName(from)) && isValidRefName(to);
  });
  const lines = ['# service=git-upload-pack\n'];
  const caps = capabilities.join(' ');
  const refLines: string[] = [];
  for (const ref of kept) {
    refLines.push(`${ref.oid} ${ref.name}`);
    if (ref.peeled) refLines.push(`${ref.peeled} ${ref.name}^{}`);
  }
  if (refLines.length === 0) refLines.push(`${ZERO_OID} capabilities^{}`);
  refLines[0] += `\0${caps}`;
  const parts = [encodePktLine(lines[0]), FLUSH_PKT];
  for (const line of refLines) parts.push(encodePktLine(`${line}\n`));
  for (const oid of adv.shallow) parts.push(encodePktLine(`shallow ${oid}\n`));
  parts.push(FLUSH_PKT);
  return { body: concatBytes(parts), warnings };
}

/** isomorphic-git does not report what it received, so count it from the stored packs. */
async function countObjects(pfs: PromiseFs): Promise<CloneResult['objects']> {
  const counts = { commit: 0, tree: 0, blob: 0, tag: 0 };
  const dir = `${GITDIR}/objects/pack`;
  for (const name of await pfs.readdir(dir)) {
    if (!name.endsWith('.pack')) continue;
    const ingester = await PackIngester.create();
    ingester.push((await pfs.readFile(`${dir}/${name}`)) as Uint8Array);
    const pack = await ingester.finish();
    for (const k of Object.keys(counts) as (keyof typeof counts)[]) counts[k] += pack.counts[k];
  }
  return counts;
}

/**
 * isomorphic-git's web HTTP client (isomorphic-git/http/web), through the engine's fetch rather than the
 * global one: the request body collected (no streaming uploads in browsers), the response body streamed.
 */
async function request(fetchFn: typeof fetch, req: GitHttpRequest): Promise<GitHttpResponse> {
  let body: Uint8Array | undefined;
  if (req.body) {
    const parts: Uint8Array[] = [];
    for await (const part of req.body) parts.push(part);
    body = concatBytes(parts);
  }
  const res = await fetchFn(req.url, {
    method: req.method ?? 'GET',
    headers: req.headers,
    body: body as BodyInit | undefined,
    signal: req.signal as AbortSignal | undefined,
  });
  const headers: Record<string, string> = {};
  for (const [key, value] of res.headers.entries()) headers[key] = value;
  return {
    url: res.url,
    method: req.method,
    statusCode: res.status,
    statusMessage: res.statusText,
    body: res.body ? chunks(res.body) : single(new Uint8Array(await res.arrayBuffer())),
    headers,
  };
}

async function* chunks(stream: ReadableStream<Uint8Array>): AsyncIterableIterator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

async function* single(bytes: Uint8Array): AsyncIterableIterator<Uint8Array> {
  yield bytes;
}

async function peel(fs: FS, oid: string): Promise<string> {
  let current = oid;
  for (let i = 0; i < 10; i++) {
    const obj = await git.readObject({ fs, gitdir: GITDIR, oid: current });
    if (obj.type !== 'tag') return current;
    current = (obj.object as { object: string }).object;
  }
  return current;
}

function hasToken(req: GitHttpRequest): boolean {
  return Object.keys(req.headers ?? {}).some((h) => h.toLowerCase() === 'authorization');
}

/**
 * One of isomorphic-git's requests that carries a token, sent with `redirect: 'manual'`, as GitHttpClient
 * sends its own: isomorphic-git's web client follows redirects, and a browser that keeps Authorization on
 * one would carry the token wherever the server points. The info/refs GET before the fallback already took
 * the repository's one allowed move (to the same origin), so a redirect here is refused.
 */
async function withoutRedirects(
  fetchFn: typeof fetch,
  req: GitHttpRequest,
  signal: AbortSignal | undefined,
): Promise<GitHttpResponse> {
  const parts: Uint8Array[] = [];
  for await (const part of req.body ?? []) parts.push(part);
  const res = await fetchFn(req.url, {
    method: req.method,
    headers: req.headers,
    body: parts.length ? (concatBytes(parts) as BodyInit) : undefined,
    signal,
    redirect: 'manual',
    credentials: 'omit',
  });
  if (isRedirect(res)) {
    throw new TransportError(
      'REDIRECT_REFUSED',
      `${new URL(req.url).host} redirected a request that carried a token.`,
    );
  }
  return {
    url: res.url,
    method: req.method,
    statusCode: res.status,
    statusMessage: res.statusText,
    headers: Object.fromEntries(res.headers),
    body: res.body ? bodyChunks(res.body) : undefined,
  };
}

async function* bodyChunks(body: ReadableStream<Uint8Array>): AsyncIterableIterator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (let step = await reader.read(); !step.done; step = await reader.read()) yield step.value;
  } finally {
    reader.releaseLock();
  }
}
