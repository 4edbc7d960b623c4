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
    setupFiles: ['test/nodeBrowserEnv.ts'],
    // Tests read the one git server's per-repo byte counters; files running at once would blur them.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
