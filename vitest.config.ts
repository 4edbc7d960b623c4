import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['workers/**/*.test.ts', 'server/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/globalSetup.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
