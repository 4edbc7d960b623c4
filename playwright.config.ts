import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from '@playwright/test';
import { chromiumLaunch } from './e2e/chromium.ts';

// E2E_PORT moves every port the e2e tests use (app, git, proxy, push server here; the widget's host pages at
// +4 and +5 in e2e/embed.spec.ts), so two checkouts can run their end-to-end tests on one machine at once.
const APP_PORT = Number(process.env.E2E_PORT ?? 4173);
const GIT_PORT = APP_PORT + 1;
const PROXY_PORT = APP_PORT + 2;
const PUSH_PORT = APP_PORT + 3;
// The spec files read these; the test workers inherit the config process's environment.
process.env.GIT_SERVER_URL ??= `http://127.0.0.1:${GIT_PORT}`;
process.env.CORS_PROXY_URL ??= `http://127.0.0.1:${PROXY_PORT}`;
process.env.PUSH_SERVER_URL ??= `http://127.0.0.1:${PUSH_PORT}`;
// The push server's repositories, which e2e/push.spec.ts replaces with fresh copies before it pushes.
process.env.PUSH_ROOT ??= join(tmpdir(), `blobless-e2e-push-${APP_PORT}`);

export default defineConfig({
  testDir: 'e2e',
  timeout: 120_000,
  // How long an expectation waits for its state before failing. Playwright's 5 s is short for a page whose
  // worker fetches, indexes and stores while another job holds one of two cores (`npm run test:load`):
  // only a failing test ever waits this long. Waits on a clone, a checkout or a history fill say their own.
  expect: { timeout: 20_000 },
  fullyParallel: false,
  workers: 1,
  reporter: [['list']],
  use: {
    baseURL: `http://localhost:${APP_PORT}`,
    browserName: 'chromium',
    launchOptions: chromiumLaunch(),
  },
  webServer: {
    command: `npx tsx server/start.ts --app-port ${APP_PORT} --git-port ${GIT_PORT} --proxy-port ${PROXY_PORT} --push-port ${PUSH_PORT} --push-root ${process.env.PUSH_ROOT}`,
    url: `http://localhost:${APP_PORT}`,
    reuseExistingServer: !process.env.CI,
    timeout: 180_000,
    env: {
      GIT_SERVER_URL: process.env.GIT_SERVER_URL,
      CORS_PROXY_URL: process.env.CORS_PROXY_URL,
      PUSH_SERVER_URL: process.env.PUSH_SERVER_URL,
    },
  },
});
