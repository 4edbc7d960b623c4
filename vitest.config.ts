import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'src/**/*.test.ts',
      'workers/**/*.test.ts',
      'server/**/*.test.ts',
      'test/**/*.test.ts',
      'bench/**/*.test.ts',
    ],
    globalSetup: ['test/globalSetup.ts'],
    setupFiles: ['test/nodeBrowserEnv.ts', 'test/byteEquality.ts'],
    // Tests read the one git server's per-repo byte counters; files running at once would blur them.
    fileParallelism: false,
    // A deadline, not a timing: some tests are minutes of CPU on a busy 2-core machine (the ingester fed a
    // pack cut at every byte took 60 s while other suites ran), and only a hung test ever waits this long.
    testTimeout: 180_000,
    hookTimeout: 180_000,
  },
});
