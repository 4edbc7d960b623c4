import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';

const TEST_DIRS = ['src', 'workers', 'server', 'test', 'bench'];
/** The packed package's tests, a step of `npm test` of their own (they need Chromium: `pretest:package`). */
const PACKAGE_TEST = 'test/package.test.ts';

/** What every test file runs with (vitest.mutate.config.ts too). */
export function sharedTestOptions() {
  return {
    setupFiles: ['test/nodeBrowserEnv.ts', 'test/byteEquality.ts'],
    // A deadline, not a timing: some tests are minutes of CPU on a busy 2-core machine (the ingester fed a
    // pack cut at every byte took 60 s while other suites ran), and only a hung test ever waits this long.
    testTimeout: 180_000,
    hookTimeout: 180_000,
  };
}

/** What a file that must run with no other beside it says, under the comment's first lines. */
const ALONE_MARK = '// Runs alone (vitest.config.ts)';

/**
 * The files that run one at a time: those that read the one git server's per-repo byte counters
 * (test/support/serverStats.ts, or the endpoints themselves), found by their text so that a new one never
 * runs beside another file by mistake, and those marked ALONE_MARK (wall-clock bounds on a worker's answers).
 */
function aloneFiles(): string[] {
  const root = import.meta.dirname;
  return TEST_DIRS.flatMap((dir) =>
    readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.test.ts'))
      .map((file) => `${dir}/${file.split('\\').join('/')}`),
  ).filter((file) => {
    const text = readFileSync(join(root, file), 'utf8');
    return /serverStats|STATS_(RESET_)?PATH/.test(text) || text.includes(ALONE_MARK);
  });
}

export default defineConfig({
  test: {
    // The root's alone, so both groups share one git server and one fixture build; in a project, each
    // project would run its own.
    globalSetup: ['test/globalSetup.ts'],
    /*
     * Two groups, one after the other (groupOrder). aloneFiles() run one at a time, so that no other file's
     * requests blur the byte counters, nor its CPU stretch a bound on a wall clock; every other file runs two
     * at a time, which on 2 cores overlaps one file's CPU with another's waits (git, the server) even while a
     * busy loop holds one.
     */
    projects: [
      {
        test: {
          ...sharedTestOptions(),
          name: 'parallel',
          include: TEST_DIRS.map((dir) => `${dir}/**/*.test.ts`),
          exclude: [...configDefaults.exclude, PACKAGE_TEST, ...aloneFiles()],
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...sharedTestOptions(),
          name: 'alone',
          include: aloneFiles(),
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
      {
        // `npm run test:package` (`--project package`); `npm run test:unit` names the two above.
        test: {
          ...sharedTestOptions(),
          name: 'package',
          include: [PACKAGE_TEST],
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
