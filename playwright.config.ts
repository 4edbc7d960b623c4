import { defineConfig } from '@playwright/test';

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
    launchOptions: {
      // Debian's Chromium: Playwright cannot download its own browser on these machines.
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
  webServer: {
    command: `npx tsx server/start.ts --app-port ${APP_PORT} --git-port ${GIT_PORT} --proxy-port ${PROXY_PORT}`,
    url: `http://localhost:${APP_PORT}`,
    reuseExistingServer: !process.env.CI,
    timeout: 180_000,
    env: { GIT_SERVER_URL: `http://127.0.0.1:${GIT_PORT}`, CORS_PROXY_URL: `http://127.0.0.1:${PROXY_PORT}` },
  },
});
