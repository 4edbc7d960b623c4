import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP pass-through in front of a local server that counts the connections made to it: for asserting that
 * nothing at all reached that server, not even a request it would have refused.
 */
export async function countConnections(
  targetPort: number,
): Promise<{ url: string; readonly connections: number; close(): Promise<void> }> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    connections++;
    const upstream = connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
