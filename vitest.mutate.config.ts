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
    // None of these tests asks for the git server or the fixtures (they run git themselves): without the global
    // setup a test runner starts in seconds, and Stryker restarts one after every mutant that timed out.
    globalSetup: [],
    include: [
      'workers/model/**/*.test.ts',
      'workers/wire/**/*.test.ts',
      'workers/pack/**/*.test.ts',
      'workers/ops/sync/negotiator.test.ts',
      'test/treeParser.fuzz.test.ts',
    ],
    exclude: [...configDefaults.exclude, 'workers/pack/packIngester.fuzz.test.ts'],
  },
});
