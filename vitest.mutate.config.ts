import { configDefaults, defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

/**
 * The tests `npm run mutate` runs against each mutant (stryker.config.mjs). The engine's pure layers are judged
 * by their own unit tests and the oracle fuzz tests beside them, not by the ops suites that clone from a git
 * server: those would make every mutant of pktLine.ts cost a clone. Left out: treeCost.fuzz, which times code
 * (a mutant that only slows it would be "killed" by a busy machine), and packIngester.fuzz, whose git index-pack
 * sample needs some 2,500 cases (~20 s) before it judges anything.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    // The pure layers' tests ask for neither the git server nor the fixtures (they run git themselves): without
    // the global setup a test runner starts in seconds, and Stryker restarts one after every mutant that timed
    // out. The transport's, store's and ops' tests clone from the server: `MUTATE_GIT_SERVER=1` starts it.
    globalSetup: process.env.MUTATE_GIT_SERVER === '1' ? base.test?.globalSetup : [],
    include: [
      'workers/model/**/*.test.ts',
      'workers/wire/**/*.test.ts',
      'workers/pack/**/*.test.ts',
      'workers/ops/sync/negotiator.test.ts',
      'test/treeParser.fuzz.test.ts',
      // With MUTATE_GIT_SERVER=1:
      'workers/transport/**/*.test.ts',
      'workers/store/**/*.test.ts',
      'test/retryPolicy.test.ts',
      'test/redirect.test.ts',
      'test/credentials.test.ts',
      'test/cloneErrors.test.ts',
    ],
    exclude: [...configDefaults.exclude, 'workers/pack/packIngester.fuzz.test.ts'],
  },
});
