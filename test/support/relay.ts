import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodePktLine, FLUSH_PKT, PktLineDecoder } from '../../workers/wire/pktLine.ts';

export type RelayMode =
  /** Forward the fetch response's first N bytes, then destroy the connection. */
  | { kind: 'drop'; afterBytes: number }
  /** Flip one bit inside the pack data of the fetch response (band 1), keeping the pkt-line framing valid. */
  | { kind: 'corrupt-pack' }
  /** Answer every request with an HTML page, as a misconfigured web server would. */
  | { kind: 'html' };

/** A misbehaving server for failure tests: relays to the real git server and breaks one thing. */
export async function startRelay(
  target: string,
  mode: RelayMode,
): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    if (mode.kind === 'html') {
      res.writeHead(200, { 'Content-Type': 'text/html', 'Access-Control-Allow-Origin': '*' });
      res.end('<!doctype html><title>Welcome</title><p>Not a git server</p>');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const isFetch = body.includes('command=fetch');
      const up = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
        },
        (upRes) => {
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          if (!isFetch) {
            upRes.pipe(res);
            return;
          }
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
          const decoder = new PktLineDecoder();
          let flipped = false;
          upRes.on('data', (c: Buffer) => {
            for (const p of decoder.push(new Uint8Array(c))) {
              if (p.type === 'data') {
                const data = new Uint8Array(p.data);
                if (!flipped && data[0] === 1 && data.length > 64) {
                  data[data.length - 20] ^= 0x10;
                  flipped = true;
                }
                res.write(encodePktLine(data));
              } else if (p.type === 'flush') res.write(FLUSH_PKT);
              else
                res.write(
                  p.type === 'delim' ? new Uint8Array([48, 48, 48, 49]) : new Uint8Array([48, 48, 48, 50]),
                );
            }
          });
          upRes.on('end', () => res.end());
        },
      );
      up.on('error', () => res.destroy());
      up.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
