/**
 * A small git smart-HTTP server that says exactly what a test tells it to, for the hostile cases git's own
 * http-backend refuses to produce: ref names git would never write, delta bombs, endless progress text,
 * endless advertisements. It speaks protocol v2 (info/refs capabilities, ls-refs, fetch) with pkt-lines
 * built here, or a v0 advertisement and upload-pack answer for the v1 fallback.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { buildPack, objectId } from '../../workers/pack/testing/packBuilder.ts';
import { concatBytes, DELIM_PKT, encodePktLine, FLUSH_PKT } from '../../workers/wire/pktLine.ts';

export interface CraftedRef {
  name: string;
  /** Omit for an unborn ref. */
  oid?: string;
  symrefTarget?: string;
  peeled?: string;
}

export interface CraftedRepo {
  /** Protocol v2 (default) or a v0 advertisement (the client falls back to isomorphic-git's v1 clone). */
  protocol?: 2 | 0;
  refs: CraftedRef[];
  /** The pack the fetch answers with. */
  pack: Uint8Array;
  /** The packs of the fetches in turn, for a reader that asks once per object; past the last, `pack`. */
  packs?: Uint8Array[];
  /** `shallow` lines of a shallow-info section before the packfile, as a depth-limited fetch gets. */
  shallow?: string[];
  /** Answers every fetch with `ERR <text>` (gitprotocol-v2: a fatal error), as upload-pack's "not our ref". */
  fetchError?: string;
  /**
   * Answers every fetch with acknowledgments alone (`NAK`), no pack: a server that ignored `done`, after which
   * gitprotocol-v2 has it send no acknowledgments but the packfile.
   */
  noPack?: boolean;
  /** Capabilities of `fetch` advertised instead of `shallow wait-for-done filter`. */
  fetchCapabilities?: string;
  /** The advertised object-format instead of sha1. */
  objectFormat?: string;
  /** Band-2 payloads sent before the pack. */
  progress?: Uint8Array[];
  /**
   * Where to send an endless stream of plausible pkt-lines instead of a proper answer; `info/refs-again`
   * answers the first info/refs properly and the next ones endlessly (the v1 fallback asks twice); `fetch`
   * opens the packfile section and sends progress text that never ends its line (every fetch, of any kind).
   */
  endless?: 'info/refs' | 'info/refs-again' | 'ls-refs' | 'fetch';
  /** Answer ls-refs with gzipBombedLsRefs(): a small gzip body that decodes to 65 MiB of ref lines. */
  gzipBomb?: boolean;
  /**
   * The answer, instead of `refs`, to an ls-refs that asks for tags by name only (each `ref-prefix` under
   * `refs/tags/`, none the whole of it): the listing that confirms the tags a fetch's pack brought
   * (followedTags.ts).
   */
  tagListing?: CraftedRef[];
}

let bomb: Buffer | undefined;

/**
 * 65 MiB of well-formed ls-refs lines (one ref, again and again), gzipped: about 200 KB on the wire, past
 * the client's maxLsRefsBytes (64 MiB) only once decoded. Built once, on first use.
 */
export function gzipBombedLsRefs(): Buffer {
  if (!bomb) {
    const line = encodePktLine(`${'1'.repeat(40)} refs/heads/bomb\n`);
    const decoded = Buffer.alloc(65 * 1024 * 1024 - ((65 * 1024 * 1024) % line.length));
    for (let i = 0; i < decoded.length; i += line.length) decoded.set(line, i);
    bomb = gzipSync(decoded, { level: 9 });
  }
  return bomb;
}

/**
 * A commit and its one-file tree (`a.txt`), as a pack: what a blob:none clone of a tiny repo receives;
 * `withBlob` adds the file's content, for a reader that asks for it in a later request.
 */
export function tinyRepoPack(
  message = 'first',
  opts: { withBlob?: boolean } = {},
): { pack: Uint8Array; commit: string; blob: Uint8Array } {
  const enc = new TextEncoder();
  const blob = enc.encode('hello\n');
  const blobId = objectId('blob', blob);
  const tree = concatBytes([enc.encode('100644 a.txt\0'), Buffer.from(blobId, 'hex')]);
  const treeId = objectId('tree', tree);
  const who = 'A U Thor <author@example.com> 1700000000 +0000';
  const commit = enc.encode(`tree ${treeId}\nauthor ${who}\ncommitter ${who}\n\n${message}\n`);
  return {
    pack: buildPack([
      { type: 'commit', data: commit },
      { type: 'tree', data: tree },
      ...(opts.withBlob ? [{ type: 'blob', data: blob } as const] : []),
    ]),
    commit: objectId('commit', commit),
    blob,
  };
}

const V2_CAPABILITIES = [
  'version 2\n',
  'agent=git/2.39.5\n',
  'ls-refs=unborn\n',
  'fetch=shallow wait-for-done filter\n',
  'server-option\n',
  'object-format=sha1\n',
];

/** A POST the crafted server was sent: the repo's name and the request body as text. */
export interface CraftedRequest {
  repo: string;
  body: string;
}

/** Serves `repos` at `/<name>`; returns its base URL, and the POSTs it was sent (in order). */
export async function startCraftedServer(
  repos: Record<string, CraftedRepo>,
): Promise<{ url: string; requests: CraftedRequest[]; close(): Promise<void> }> {
  const requests: CraftedRequest[] = [];
  const server: Server = createServer((req, res) => {
    // Open to any page, so the app in Chromium can clone from it (the git server does the same for tests).
    res.setHeader('Access-Control-Allow-Origin', '*');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        'Access-Control-Allow-Methods': 'GET, POST',
        'Access-Control-Allow-Headers': 'Git-Protocol, Content-Type, Authorization, Accept',
        'Access-Control-Max-Age': '600',
      });
      res.end();
      return;
    }
    const body: Buffer[] = [];
    req.on('data', (c: Buffer) => body.push(c));
    req.on('end', () => {
      try {
        answer(repos, req, Buffer.concat(body), res, requests);
      } catch (err) {
        res.writeHead(500);
        res.end(String(err));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const infoRefsRequests = new WeakMap<CraftedRepo, number>();

function answer(
  repos: Record<string, CraftedRepo>,
  req: IncomingMessage,
  body: Buffer,
  res: ServerResponse,
  requests: CraftedRequest[],
) {
  const url = new URL(req.url ?? '/', 'http://x');
  const match = /^\/([^/]+)\/(info\/refs|git-upload-pack)$/.exec(url.pathname);
  const repo = match ? repos[match[1]] : undefined;
  if (!match || !repo) {
    res.writeHead(404);
    res.end();
    return;
  }
  // As git http-backend: v2 only for a request that asks for it in `Git-Protocol` (a v2 POST without it gets an
  // empty 200), and the smart advertisement only with `?service=git-upload-pack` (without it, the dumb ref
  // list). A client that forgot either then fails here as it would against git.
  const askedV2 = /(^|:)version=2($|:)/.test(String(req.headers['git-protocol'] ?? ''));
  const v2 = (repo.protocol ?? 2) === 2 && askedV2;
  if (match[2] === 'info/refs' && url.searchParams.get('service') !== 'git-upload-pack') {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end(
      repo.refs
        .filter((r) => r.oid && r.name !== 'HEAD')
        .map((r) => `${r.oid}\t${r.name}\n`)
        .join(''),
    );
    return;
  }
  if (match[2] === 'git-upload-pack' && (repo.protocol ?? 2) === 2 && !askedV2) {
    res.writeHead(200, { 'Content-Type': 'application/x-git-upload-pack-result' });
    res.end();
    return;
  }
  if (match[2] === 'info/refs') {
    res.writeHead(200, { 'Content-Type': 'application/x-git-upload-pack-advertisement' });
    const asked = (infoRefsRequests.get(repo) ?? 0) + 1;
    infoRefsRequests.set(repo, asked);
    if (repo.endless === 'info/refs' || (repo.endless === 'info/refs-again' && asked > 1)) {
      const opening = v2 ? V2_CAPABILITIES : ['# service=git-upload-pack\n'];
      return endlessRefLines(res, [...opening.map(encodePktLine), ...(v2 ? [] : [FLUSH_PKT])]);
    }
    res.end(
      v2 ? concatBytes([...v2Capabilities(repo).map(encodePktLine), FLUSH_PKT]) : v0Advertisement(repo),
    );
    return;
  }
  const text = body.toString('latin1');
  const fetches = requests.filter((r) => r.repo === match[1] && r.body.includes('command=fetch')).length;
  requests.push({ repo: match[1], body: text });
  if (v2 && repo.gzipBomb && text.includes('command=ls-refs')) {
    res.writeHead(200, {
      'Content-Type': 'application/x-git-upload-pack-result',
      'Content-Encoding': 'gzip',
    });
    res.end(gzipBombedLsRefs());
    return;
  }
  res.writeHead(200, { 'Content-Type': 'application/x-git-upload-pack-result' });
  if (v2 && text.includes('command=ls-refs')) {
    if (repo.endless === 'ls-refs') return endlessRefLines(res, []);
    const prefixes = requestLines(text)
      .filter((l) => l.startsWith('ref-prefix '))
      .map((l) => l.slice('ref-prefix '.length));
    const byTagName =
      prefixes.length > 0 && prefixes.every((p) => p.startsWith('refs/tags/') && p !== 'refs/tags/');
    const refs = (byTagName && repo.tagListing) || repo.refs;
    res.end(concatBytes([...refs.map((r) => encodePktLine(`${lsRefsLine(r)}\n`)), FLUSH_PKT]));
    return;
  }
  if (v2 && text.includes('command=fetch')) {
    if (repo.endless === 'fetch') return endlessProgress(res);
    if (repo.fetchError !== undefined) {
      res.end(concatBytes([encodePktLine(`ERR ${repo.fetchError}\n`), FLUSH_PKT]));
      return;
    }
    if (repo.noPack) {
      res.end(concatBytes([encodePktLine('acknowledgments\n'), encodePktLine('NAK\n'), FLUSH_PKT]));
      return;
    }
    const pack = repo.packs?.[fetches] ?? repo.pack;
    const shallow = repo.shallow?.length
      ? [
          encodePktLine('shallow-info\n'),
          ...repo.shallow.map((c) => encodePktLine(`shallow ${c}\n`)),
          DELIM_PKT,
        ]
      : [];
    res.end(
      concatBytes([
        ...shallow,
        encodePktLine('packfile\n'),
        ...(repo.progress ?? []).map((p) => encodePktLine(concatBytes([Uint8Array.of(2), p]))),
        ...sideband(pack),
        FLUSH_PKT,
      ]),
    );
    return;
  }
  // v0 upload-pack: `want`s, `done`; we answer NAK and the pack on side-band-64k, as upload-pack does.
  res.end(concatBytes([encodePktLine('NAK\n'), ...sideband(repo.pack), FLUSH_PKT]));
}

function v2Capabilities(repo: CraftedRepo): string[] {
  return V2_CAPABILITIES.map((line) =>
    line.startsWith('fetch=') && repo.fetchCapabilities !== undefined
      ? `fetch${repo.fetchCapabilities ? `=${repo.fetchCapabilities}` : ''}\n`
      : line.startsWith('object-format=') && repo.objectFormat
        ? `object-format=${repo.objectFormat}\n`
        : line,
  );
}

function lsRefsLine(ref: CraftedRef): string {
  let line = `${ref.oid ?? 'unborn'} ${ref.name}`;
  if (ref.symrefTarget) line += ` symref-target:${ref.symrefTarget}`;
  if (ref.peeled) line += ` peeled:${ref.peeled}`;
  return line;
}

function v0Advertisement(repo: CraftedRepo): Uint8Array {
  const head = repo.refs.find((r) => r.name === 'HEAD');
  const caps = ['multi_ack', 'side-band-64k', 'ofs-delta', 'shallow', 'no-progress', 'include-tag'];
  if (head?.symrefTarget) caps.push(`symref=HEAD:${head.symrefTarget}`);
  caps.push('agent=git/2.39.5');
  const lines: string[] = [];
  for (const ref of repo.refs) {
    lines.push(`${ref.oid} ${ref.name}`);
    if (ref.peeled) lines.push(`${ref.peeled} ${ref.name}^{}`);
  }
  lines[0] += `\0${caps.join(' ')}`;
  return concatBytes([
    encodePktLine('# service=git-upload-pack\n'),
    FLUSH_PKT,
    ...lines.map((l) => encodePktLine(`${l}\n`)),
    FLUSH_PKT,
  ]);
}

/** Pack bytes as band-1 packets of git's maximum size. */
function sideband(pack: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < pack.length; i += 65515) {
    out.push(encodePktLine(concatBytes([Uint8Array.of(1), pack.subarray(i, i + 65515)])));
  }
  return out;
}

/** A packfile section whose band-2 progress text never ends its line, for as long as the client reads. */
function endlessProgress(res: ServerResponse): void {
  const dots = encodePktLine(concatBytes([Uint8Array.of(2), new TextEncoder().encode('.'.repeat(8192))]));
  pumpForever(res, [encodePktLine('packfile\n')], concatBytes(Array.from({ length: 8 }, () => dots)));
}

/** Writes well-formed ref lines for as long as the client keeps reading. */
function endlessRefLines(res: ServerResponse, opening: Uint8Array[]): void {
  const block = concatBytes(
    Array.from({ length: 1000 }, (_, i) =>
      encodePktLine(`${'1'.repeat(40)} refs/heads/branch-${String(i).padStart(6, '0')}\n`),
    ),
  );
  pumpForever(res, opening, block);
}

/** `opening`, then `block` again and again until the client goes away. */
function pumpForever(res: ServerResponse, opening: Uint8Array[], block: Uint8Array): void {
  for (const p of opening) res.write(p);
  let stopped = false;
  res.on('close', () => {
    stopped = true;
  });
  const pump = () => {
    while (!stopped && res.write(block));
    if (!stopped) res.once('drain', pump);
  };
  pump();
}

/** The pkt-lines of a request body (as the log keeps it), without their lengths or LFs; flush and delim left out. */
export function requestLines(body: string): string[] {
  const lines: string[] = [];
  for (let i = 0; i + 4 <= body.length; ) {
    const length = Number.parseInt(body.slice(i, i + 4), 16);
    if (length < 4) {
      i += 4;
      continue;
    }
    lines.push(body.slice(i + 4, i + length).replace(/\n$/, ''));
    i += length;
  }
  return lines;
}
