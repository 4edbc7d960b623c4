import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SeededRandom } from '../../server/fixtures/seededRandom.ts';
import {
  DELIM_PKT,
  encodePktLine,
  FLUSH_PKT,
  type Packet,
  PktLineDecoder,
  RESPONSE_END_PKT,
} from '../../workers/wire/pktLine.ts';

export type RelayMode =
  /** Forward the fetch response's first N bytes, then destroy the connection. */
  | { kind: 'drop'; afterBytes: number }
  /**
   * Flip one bit of the pack (band 1 of the fetch response), keeping the pkt-line framing valid: inside the
   * objects (after the 12-byte header, before the trailer) or inside the 20-byte SHA-1 trailer only. The
   * position comes from `seed`, so a run flips the same bit as the one before.
   */
  | { kind: 'corrupt-pack'; where: 'objects' | 'trailer'; seed: number }
  /** Answer every request with an HTML page, as a misconfigured web server would. */
  | { kind: 'html' }
  /** Pass `info/refs` through, answer every POST with this, as a broken proxy or a failing backend would. */
  | { kind: 'post-answer'; status: number; contentType: string | null; body: string }
  /**
   * Forward the first half of the fetch response's pack bytes, then send the server's failure as git would
   * (an `ERR` packet or a band-3 message) and end the response.
   */
  | { kind: 'fail-mid-pack'; as: 'err-packet' | 'sideband-3'; text: string }
  /** Remove one capability of `fetch` from the v2 advertisement, as a server without it would send it. */
  | { kind: 'hide-fetch-capability'; capability: string }
  /**
   * Cut the connection of every request but those whose User-Agent starts with `userAgent`: in Node, what a
   * browser makes of a host that sends no CORS headers, while a CORS proxy still gets through.
   */
  | { kind: 'only-for'; userAgent: string }
  /**
   * Forward the `post`-th POST's response (1-based: ls-refs is the first of a clone, its fetch the second,
   * the checkout's blob fetches after) up to `afterBytes` bytes, then hold the rest until release(): a
   * request caught in the middle, for as long as a test needs.
   */
  | { kind: 'hold'; post: number; afterBytes: number }
  /**
   * Drop the `ref-prefix` arguments of every ls-refs request on its way to the server, which then lists
   * all its refs: a server that does not filter, as gitprotocol-v2 allows ("purely for optimization").
   */
  | { kind: 'ignore-ref-prefix' }
  /**
   * Hold the answer of each info/refs GET until a POST reaches the relay, or `timeoutMs` passed; `seen`
   * says whether a POST came while a GET was held (a client that asks ls-refs together with info/refs), and
   * counts the ls-refs POSTs.
   */
  | { kind: 'hold-info-refs-for-post'; timeoutMs: number; seen: { postDuringGet: boolean; lsRefs: number } }
  /**
   * Send the ls-refs POSTs to the repository at `path` instead (the relay's other requests go where they
   * were sent): a server whose ls-refs answer is not the repository its info/refs describes.
   */
  | { kind: 'ls-refs-to'; path: string }
  /** Break nothing: pass everything through; keep each request's path, body, and whether it had a token. */
  | { kind: 'record'; requests: { path: string; body: Buffer; authorized?: boolean }[] }

  /**
   * One fault of the fault table (see `Fault`), on the requests `on` names, the first `times` of them
   * (default: all); the others pass through untouched. `Relay.faults` counts the faulted ones.
   */
  | { kind: 'fault'; fault: Fault; on: FaultTarget; times?: number };

/** Which requests a fault hits: the advertisement GET, or the POSTs of one v2 command. */
/** Which request a fault strikes: `push` is receive-pack's POST (its info/refs GET is `info-refs`). */
export type FaultTarget = 'info-refs' | 'ls-refs' | 'fetch' | 'push' | 'any';

/** What goes wrong with a response, as flaky networks, proxies and broken servers do it. */
export type Fault =
  /** The connection is destroyed after this share of the response's bytes (0.1, 0.5, 0.9). */
  | { type: 'cut'; at: number }
  /** An HTTP error status with no git in it; `retryAfter` (seconds) is sent as Retry-After. */
  | { type: 'status'; status: number; retryAfter?: number }
  /** The response in `ticks` equal slices, one every `intervalMs`: slow, or slower than the stall timeout. */
  | { type: 'drip'; ticks: number; intervalMs: number }
  /** One byte of the pack's objects xor 0xff, at a position `seed` picks; framing stays valid. */
  | { type: 'flip-byte'; seed: number }
  /** The pack's 20-byte trailer cut to `keep` bytes; framing and the closing flush stay valid. */
  | { type: 'truncate-trailer'; keep: number }
  /** Half way through, a pkt-line whose length is not hexadecimal. */
  | { type: 'bad-pkt-length' }
  /** After the first packet of the pack, a side-band error (band 3), as upload-pack sends on failure. */
  | { type: 'sideband-error'; text: string }
  /** 200 with an HTML page, as a captive portal or a misrouted proxy answers. */
  | { type: 'html' }
  /** The connection is destroyed before any byte of the response. */
  | { type: 'reset' };

export interface Relay {
  url: string;
  /** Requests that reached the relay, preflights included. */
  readonly requests: number;
  /** hold: resolves once the held response stopped after its first bytes. */
  readonly holding: Promise<void>;
  /** hold: lets the held response go on. */
  release(): void;
  /** Which bit of the pack was flipped (corrupt-pack): the byte offset in the pack stream and the mask. */
  readonly flipped: { offset: number; mask: number; packLength: number } | null;
  /** fault: how many responses were broken so far (a test checks its fault was applied). */
  readonly faults: number;
  /** Changes the mode for the requests that come next (one relay, and so one stored URL, for many faults). */
  setMode(next: RelayMode): void;
  close(): Promise<void>;
}

const encodeControl = (p: Packet): Uint8Array =>
  p.type === 'flush' ? FLUSH_PKT : p.type === 'delim' ? DELIM_PKT : RESPONSE_END_PKT;

/** A misbehaving server for failure tests: relays to the real git server and breaks one thing. */
export async function startRelay(target: string, initialMode: RelayMode, listenOn = 0): Promise<Relay> {
  let mode = initialMode;
  const currentMode = () => mode;
  const upstream = new URL(target);
  let requests = 0;
  let flipped: Relay['flipped'] = null;
  let posts = 0;
  let faults = 0;
  let startHolding = () => {};
  const holding = new Promise<void>((resolve) => {
    startHolding = resolve;
  });
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });

  const hold = (upRes: IncomingMessage, res: ServerResponse, afterBytes: number) => {
    res.on('close', () => upRes.destroy());
    if (afterBytes === 0) {
      upRes.pause();
      startHolding();
      void released.then(() => {
        if (!res.destroyed) upRes.pipe(res);
      });
      return;
    }
    let sent = 0;
    upRes.on('data', (c: Buffer) => {
      if (sent >= afterBytes) return;
      const room = afterBytes - sent;
      res.write(c.subarray(0, room));
      sent += Math.min(room, c.length);
      if (sent < afterBytes) return;
      upRes.pause();
      startHolding();
      const rest = c.subarray(room);
      void released.then(() => {
        if (res.destroyed) return;
        if (rest.length > 0) res.write(rest);
        upRes.removeAllListeners('data');
        upRes.pipe(res);
        upRes.resume();
      });
    });
    upRes.on('end', () => {
      if (sent < afterBytes) res.end();
    });
  };

  const onFetchResponse = (upRes: IncomingMessage, res: ServerResponse) => {
    const mode = currentMode();
    if (mode.kind === 'drop') {
      let sent = 0;
      upRes.on('data', (c: Buffer) => {
        const room = mode.afterBytes - sent;
        if (room <= 0) return;
        res.write(c.subarray(0, room));
        sent += Math.min(room, c.length);
        if (sent >= mode.afterBytes) {
          upRes.destroy();
          res.socket?.destroy();
        }
      });
      return;
    }
    // The other modes need the packets whole; fetch responses of the fixtures are a few MB at most.
    const chunks: Buffer[] = [];
    upRes.on('data', (c: Buffer) => chunks.push(c));
    upRes.on('end', () => {
      const packets = new PktLineDecoder().push(new Uint8Array(Buffer.concat(chunks)));
      const isPack = (p: Packet): p is Packet & { type: 'data' } => p.type === 'data' && p.data[0] === 1;
      if (mode.kind === 'corrupt-pack') {
        const packLength = packets.reduce((n, p) => n + (isPack(p) ? p.data.length - 1 : 0), 0);
        const random = new SeededRandom(mode.seed);
        const offset =
          mode.where === 'trailer' ? packLength - 20 + random.int(20) : 12 + random.int(packLength - 32);
        const mask = 1 << random.int(8);
        let start = 0;
        for (const p of packets) {
          if (!isPack(p)) continue;
          const len = p.data.length - 1;
          if (offset >= start && offset < start + len) {
            const data = new Uint8Array(p.data);
            data[1 + offset - start] ^= mask;
            p.data = data;
          }
          start += len;
        }
        flipped = { offset, mask, packLength };
      }
      // fail-mid-pack: the failure comes halfway through the pack's bytes. Counting packets instead would
      // depend on how upload-pack happened to chunk its output, which varies with the machine's load.
      const packLength = packets.reduce((n, p) => n + (isPack(p) ? p.data.length - 1 : 0), 0);
      let packSent = 0;
      for (const p of packets) {
        if (mode.kind === 'fail-mid-pack' && isPack(p) && packSent + p.data.length - 1 > packLength >> 1) {
          const keep = (packLength >> 1) - packSent;
          if (keep > 0) res.write(encodePktLine(p.data.subarray(0, 1 + keep)));
          const text = new TextEncoder().encode(mode.text);
          res.end(
            encodePktLine(
              mode.as === 'sideband-3'
                ? Uint8Array.of(3, ...text)
                : new TextEncoder().encode(`ERR ${mode.text}`),
            ),
          );
          return;
        }
        if (isPack(p)) packSent += p.data.length - 1;
        res.write(p.type === 'data' ? encodePktLine(p.data) : encodeControl(p));
      }
      res.end();
    });
  };

  /** fault: whether this request gets the fault; counts it if so. */
  const faultHits = (target: Exclude<FaultTarget, 'any'>): boolean => {
    if (mode.kind !== 'fault') return false;
    if (mode.on !== 'any' && mode.on !== target) return false;
    if (faults >= (mode.times ?? Number.POSITIVE_INFINITY)) return false;
    faults++;
    return true;
  };

  let postArrived = () => {};
  const server: Server = createServer((req, res) => {
    requests++;
    if (req.method === 'POST') postArrived();
    if (mode.kind === 'html') {
      res.writeHead(200, { 'Content-Type': 'text/html', 'Access-Control-Allow-Origin': '*' });
      res.end('<!doctype html><title>Welcome</title><p>Not a git server</p>');
      return;
    }
    if (mode.kind === 'only-for' && !req.headers['user-agent']?.startsWith(mode.userAgent)) {
      req.socket.destroy();
      return;
    }
    if (mode.kind === 'post-answer' && req.method === 'POST') {
      req.resume();
      // writeHead would add no Content-Type, but Node's default for a string body is none either: say it.
      res.writeHead(mode.status, mode.contentType === null ? {} : { 'Content-Type': mode.contentType });
      res.end(mode.body);
      return;
    }
    const post = req.method === 'POST' ? ++posts : 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: Buffer = Buffer.concat(chunks);
      if (mode.kind === 'ignore-ref-prefix' && body.includes('command=ls-refs'))
        body = withoutRefPrefixes(body);
      if (mode.kind === 'record')
        mode.requests.push({
          path: req.url ?? '',
          body,
          authorized: req.headers.authorization !== undefined,
        });
      const isFetch = body.includes('command=fetch');
      let faulted: Fault | null = null;
      if (mode.kind === 'fault') {
        const target = req.url?.includes('/info/refs')
          ? 'info-refs'
          : req.url?.includes('/git-receive-pack')
            ? 'push'
            : isFetch
              ? 'fetch'
              : 'ls-refs';
        if (faultHits(target)) faulted = mode.fault;
      }
      if (faulted && answerWithoutUpstream(faulted, req, res)) return;
      const holdMode = mode.kind === 'hold-info-refs-for-post' ? mode : null;
      if (holdMode && body.includes('command=ls-refs')) holdMode.seen.lsRefs++;
      const lsRefsTo = mode.kind === 'ls-refs-to' && body.includes('command=ls-refs') ? mode.path : null;
      if (holdMode && req.method === 'GET' && req.url?.includes('/info/refs')) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const posted = new Promise<boolean>((resolve) => {
          postArrived = () => resolve(true);
          timer = setTimeout(() => resolve(false), holdMode.timeoutMs);
        });
        void posted.then((during) => {
          clearTimeout(timer);
          postArrived = () => {};
          if (during) holdMode.seen.postDuringGet = true;
          forwardUpstream();
        });
        return;
      }
      forwardUpstream();
      function forwardUpstream() {
        const up = request(
          {
            host: upstream.hostname,
            port: upstream.port,
            method: req.method,
            path: lsRefsTo ?? req.url,
            headers: {
              ...req.headers,
              host: upstream.host,
              // Some modes read and rewrite the answer (hide-fetch-capability), so it is asked for plain: the
              // git server gzips ref lists for a client that takes gzip, as Node's fetch does.
              'accept-encoding': 'identity',
              // The body may have been rewritten (ignore-ref-prefix).
              ...(req.headers['content-length'] === undefined
                ? {}
                : { 'content-length': String(body.length) }),
            },
          },
          (upRes) => {
            const headers = { ...upRes.headers };
            // The response may change length; let Node frame it.
            delete headers['content-length'];
            res.writeHead(upRes.statusCode ?? 502, headers);
            if (faulted) {
              breakResponse(faulted, upRes, res);
              return;
            }
            if (mode.kind === 'hold' && post === mode.post) {
              hold(upRes, res, mode.afterBytes);
              return;
            }
            if (mode.kind === 'hide-fetch-capability' && req.url?.includes('/info/refs')) {
              hideCapability(upRes, res, mode.capability);
              return;
            }
            if (
              !isFetch ||
              mode.kind === 'hold' ||
              mode.kind === 'post-answer' ||
              mode.kind === 'only-for' ||
              mode.kind === 'hide-fetch-capability' ||
              mode.kind === 'record' ||
              mode.kind === 'hold-info-refs-for-post' ||
              mode.kind === 'ls-refs-to' ||
              mode.kind === 'ignore-ref-prefix' ||
              mode.kind === 'fault'
            ) {
              upRes.pipe(res);
              return;
            }
            onFetchResponse(upRes, res);
          },
        );
        up.on('error', () => res.destroy());
        up.end(body);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(listenOn, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return requests;
    },
    get flipped() {
      return flipped;
    },
    get faults() {
      return faults;
    },
    holding,
    release: () => release(),
    setMode: (next) => {
      mode = next;
      faults = 0;
    },
    close: () =>
      new Promise((resolve) => {
        release();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function withoutRefPrefixes(body: Buffer): Buffer {
  const kept = new PktLineDecoder()
    .push(new Uint8Array(body))
    .filter((p) => p.type !== 'data' || !new TextDecoder().decode(p.data).startsWith('ref-prefix '))
    .map((p) => (p.type === 'data' ? encodePktLine(p.data) : encodeControl(p)));
  return Buffer.concat(kept);
}

function hideCapability(upRes: IncomingMessage, res: ServerResponse, capability: string): void {
  const chunks: Buffer[] = [];
  upRes.on('data', (c: Buffer) => chunks.push(c));
  upRes.on('end', () => {
    for (const p of new PktLineDecoder().push(new Uint8Array(Buffer.concat(chunks)))) {
      if (p.type !== 'data') {
        res.write(encodeControl(p));
        continue;
      }
      const line = new TextDecoder().decode(p.data);
      const match = /^fetch=(.*?)(\n?)$/s.exec(line);
      const kept = match
        ? `fetch=${match[1]
            .split(' ')
            .filter((c) => c !== capability)
            .join(' ')}${match[2]}`
        : line;
      res.write(encodePktLine(kept));
    }
    res.end();
  });
}

/** The faults that need nothing from the real server; true when it answered. */
function answerWithoutUpstream(fault: Fault, req: IncomingMessage, res: ServerResponse): boolean {
  if (fault.type === 'reset') {
    req.socket.destroy();
    return true;
  }
  if (fault.type === 'html') {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Sign in to the Wi-Fi</title><p>Please accept the terms to continue.</p>');
    return true;
  }
  if (fault.type === 'status') {
    const headers: Record<string, string> = { 'Content-Type': 'text/plain' };
    if (fault.retryAfter !== undefined) headers['Retry-After'] = String(fault.retryAfter);
    if (fault.status === 401) headers['WWW-Authenticate'] = 'Basic realm="git"';
    res.writeHead(fault.status, headers);
    res.end(`fault relay: HTTP ${fault.status}\n`);
    return true;
  }
  return false;
}

/** The faults that change the real server's response on its way. */
function breakResponse(fault: Fault, upRes: IncomingMessage, res: ServerResponse): void {
  res.on('close', () => upRes.destroy());
  const chunks: Buffer[] = [];
  upRes.on('data', (c: Buffer) => chunks.push(c));
  upRes.on('end', () => {
    const whole = Buffer.concat(chunks);
    switch (fault.type) {
      case 'cut': {
        res.write(whole.subarray(0, Math.floor(whole.length * fault.at)), () => res.socket?.destroy());
        return;
      }
      case 'drip': {
        const slice = Math.ceil(whole.length / fault.ticks);
        let sent = 0;
        const tick = () => {
          if (res.destroyed) return;
          res.write(whole.subarray(sent, sent + slice));
          sent += slice;
          if (sent >= whole.length) res.end();
          else setTimeout(tick, fault.intervalMs).unref();
        };
        tick();
        return;
      }
      case 'bad-pkt-length': {
        const packets = new PktLineDecoder().push(new Uint8Array(whole));
        const half = Math.floor(packets.length / 2);
        for (const p of packets.slice(0, half)) res.write(encodePacket(p));
        res.end(Buffer.concat([Buffer.from('zz1x'), Buffer.alloc(64, 0x41)]));
        return;
      }
      default:
        res.end(rewritePack(fault, new PktLineDecoder().push(new Uint8Array(whole))));
    }
  });
}

const encodePacket = (p: Packet): Uint8Array =>
  p.type === 'data' ? encodePktLine(p.data) : encodeControl(p);

const isPackPacket = (p: Packet): p is Packet & { type: 'data' } => p.type === 'data' && p.data[0] === 1;

/** flip-byte, truncate-trailer, sideband-error: the response's packets with the pack (band 1) changed. */
function rewritePack(fault: Fault, packets: Packet[]): Buffer {
  const out: Uint8Array[] = [];
  const packLength = packets.reduce((n, p) => n + (isPackPacket(p) ? p.data.length - 1 : 0), 0);
  let start = 0;
  let packPackets = 0;
  for (const p of packets) {
    if (!isPackPacket(p)) {
      out.push(encodePacket(p));
      continue;
    }
    const len = p.data.length - 1;
    let data = p.data;
    if (fault.type === 'flip-byte') {
      const offset = 12 + new SeededRandom(fault.seed).int(packLength - 32);
      if (offset >= start && offset < start + len) {
        data = new Uint8Array(p.data);
        data[1 + offset - start] ^= 0xff;
      }
    } else if (fault.type === 'truncate-trailer') {
      const end = packLength - 20 + fault.keep;
      if (start + len > end) data = p.data.subarray(0, 1 + Math.max(0, end - start));
    } else if (fault.type === 'sideband-error' && packPackets === 1) {
      out.push(encodePktLine(Uint8Array.of(3, ...new TextEncoder().encode(fault.text))));
      return Buffer.concat(out);
    }
    packPackets++;
    start += len;
    if (data.length > 1) out.push(encodePktLine(data));
  }
  return Buffer.concat(out);
}
