/**
 * Serves a folder of bare repositories over git smart HTTP for development:
 *   npx tsx server/cli.ts [--root DIR] [--port N] [--host H] [--v0 REPO]... [--receive-pack REPO]... [--log]
 * Without --root it builds (if needed) and serves the fixtures, set up as the tests see them.
 */
import { parseArgs } from 'node:util';
import { fixtureServerOptions } from './fixtures/fixtureServerOptions.ts';
import { ensureFixtures } from './fixtures/index.ts';
import { type GitServerOptions, startGitServer } from './gitServer.ts';

const DEFAULT_PORT = 8174;

try {
  const { values } = parseArgs({
    options: {
      root: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      v0: { type: 'string', multiple: true },
      'receive-pack': { type: 'string', multiple: true },
      log: { type: 'boolean', default: false },
    },
  });
  const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--port must be 0-65535, not ${values.port}`);

  const base: GitServerOptions = values.root
    ? { root: values.root }
    : fixtureServerOptions((await ensureFixtures()).dir);
  const server = await startGitServer({
    ...base,
    port,
    host: values.host,
    v0Repos: [...(base.v0Repos ?? []), ...(values.v0 ?? [])],
    receivePackRepos: values['receive-pack'],
    log: values.log,
  });
  process.stderr.write(`Serving ${base.root} (Ctrl-C stops)\n`);
  process.stdout.write(`${server.url}\n`);

  const stop = () => {
    server.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
