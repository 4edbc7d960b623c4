import type { TestProject } from 'vitest/node';
import { fixtureServerOptions } from '../server/fixtures/fixtureServerOptions.ts';
import { ensureFixtures } from '../server/fixtures/index.ts';
import { startGitServer } from '../server/gitServer.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `http://127.0.0.1:PORT`: the fixtures served by git http-backend, e.g. `${gitServerUrl}/basic.git`. */
    gitServerUrl: string;
    /** The folder of fixture bare repositories the server serves (read-only: copy before changing). */
    fixturesDir: string;
  }
}

/**
 * One git server for the whole run, on a free port, serving the fixtures as the dev server does.
 * BLOBLESS_GIT_SERVER_LOG=1 prints every request it answers.
 */
export default async function setup(project: TestProject) {
  // A Stryker sandbox is a copy of the worktree without `.cache`: stryker.config.mjs points it at the worktree's.
  const { dir } = await ensureFixtures({ dir: process.env.BLOBLESS_FIXTURES_DIR });
  const server = await startGitServer({
    ...fixtureServerOptions(dir),
    log: process.env.BLOBLESS_GIT_SERVER_LOG === '1',
  });
  project.provide('gitServerUrl', server.url);
  project.provide('fixturesDir', dir);
  return async () => {
    await server.close();
  };
}
