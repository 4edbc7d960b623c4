import { defineConfig } from '@playwright/test';
import { CHROMIUM_LAUNCH } from './e2e/chromium.ts';

const APP_PORT = 4173;
const GIT_PORT = 4174;
const PROXY_PORT = 4175;

export default defineConfig({
  testDir: 'e2e',
  timeout: 120_000,
  fullyParallel: false,
  workers: 1,
  reporter: [['list']],
  use: {
    baseURL: `http://localhost:${APP_PORT}`,
    browserName: 'chromium',
    launchOptions: CHROMIUM_LAUNCH,
  },
  webServer: {
    command: `npx tsx server/start.ts --app-port ${APP_PORT} --git-port ${GIT_PORT} --proxy-port ${PROXY_PORT}`,
    url: `http://localhost:${APP_PORT}`,
    reuseExistingServer: !process.env.CI,
    timeout: 180_000,
    env: { GIT_SERVER_URL: `http://127.0.0.1:${GIT_PORT}`, CORS_PROXY_URL: `http://127.0.0.1:${PROXY_PORT}` },
  },
});
