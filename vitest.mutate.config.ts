import { configDefaults, defineConfig } from 'vitest/config';
import base, { sharedTestOptions } from './vitest.config.ts';

/**
 * The tests `npm run mutate` runs against each mutant (stryker.config.mjs). The engine's pure layers are judged
 * by their own unit tests and the oracle fuzz tests beside them, not by the ops suites that clone from a git
 * server: those would make every mutant of pktLine.ts cost a clone. Left out: treeCost.fuzz, which times code
 * (a mutant that only slows it would be "killed" by a busy machine), and packIngester.fuzz, whose git index-pack
 * sample needs some 2,500 cases (~20 s) before it judges anything.
 */
/** The transport's, store's and ops' tests that clone from the git server (test/globalSetup.ts) ask for it. */
const withGitServer = process.env.MUTATE_GIT_SERVER === '1';

export default defineConfig({
  ...base,
  test: {
    ...sharedTestOptions(),
    // One file at a time, as Stryker's runner always ran them (vitest.config.ts's projects are for `npm test`).
    fileParallelism: false,
    // The pure layers' tests ask for neither the git server nor the fixtures (they run git themselves): without
    // the global setup a test runner starts in seconds, and Stryker restarts one after every mutant that timed
    // out. Tests that clone from the server may be named only with `MUTATE_GIT_SERVER=1`, which starts it.
    globalSetup: withGitServer ? base.test?.globalSetup : [],
    include: [
      'workers/model/**/*.test.ts',
      'workers/wire/**/*.test.ts',
      'workers/pack/**/*.test.ts',
      'workers/ops/sync/negotiator.test.ts',
      'workers/ops/sync/followedTags.test.ts',
      'workers/ops/sync/remoteRefNames.test.ts',
      'workers/ops/sync/lsRefsCall.test.ts',
      // Real git upload-pack answers through a scripted fetch (test/support/uploadPackFetch.ts): no server.
      'workers/ops/sync/receivePack.test.ts',
      'workers/ops/sync/fetch.test.ts',
      // A scripted fetch answering with packs of `git pack-objects`: no git server.
      'workers/ops/sync/lazyBlobs.test.ts',
      'workers/ops/sync/blobBatchPlan.test.ts',
      // checkout against git upload-pack answers through a scripted fetch, git checkout as the oracle: no server.
      'workers/ops/worktree/checkout.test.ts',
      // The crafted v2 responder, started by the test itself: no git server.
      'test/readFileMinimalCrafted.test.ts',
      // Real git upload-pack through a scripted fetch, on blame.git of the fixtures (BLOBLESS_FIXTURES_DIR).
      'test/blameCases.test.ts',
      // Its own git http-backend on repositories it builds: no fixtures, no global setup.
      'test/pushCases.test.ts',
      // Real git upload-pack answers through a scripted fetch, git's own clone and `git pull` as the oracle.
      'workers/ops/worktree/pull.test.ts',
      'test/treeParser.fuzz.test.ts',
      'workers/transport/{errors,reachability,retryPolicy,gitHttp.scripted}.test.ts',
      'workers/store/**/*.test.ts',
      ...(withGitServer
        ? [
            'workers/transport/gitHttp.test.ts',
            'test/retryPolicy.test.ts',
            'test/redirect.test.ts',
            'test/credentials.test.ts',
            'test/cloneErrors.test.ts',
            'test/fetchTags.test.ts',
            'test/hostileServer.test.ts',
            'test/lsRefsAhead.test.ts',
            'test/cloneSingleBranch.test.ts',
          ]
        : []),
      // git's own conflicted index files, read by mergeState.ts: git alone, no server.
      'workers/ops/worktree/mergeState.test.ts',
      // Bytes alone.
      'workers/ops/worktree/textMergeHazard.test.ts',
      // The warm-up's request and rounds, with a stub for the request: no server.
      'workers/ops/maintenance/ingesterWarmUp.test.ts',
      'workers/ops/sync/refsWarmUp.test.ts',
    ],
    exclude: [...configDefaults.exclude, 'workers/pack/packIngester.fuzz.test.ts'],
  },
});
