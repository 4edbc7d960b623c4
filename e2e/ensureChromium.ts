import { ChromiumMissingError, ensureChromium } from './chromium.ts';

// `npm run test:e2e` and `npm run bench` run this first, so `npm install && npm test` needs no other step.
const started = Date.now();
try {
  const path = ensureChromium();
  const took = Date.now() - started;
  console.error(`Chromium: ${path}${took > 1000 ? ` (installed in ${(took / 1000).toFixed(0)} s)` : ''}`);
} catch (err) {
  if (!(err instanceof ChromiumMissingError)) throw err;
  console.error(err.message);
  process.exit(1);
}
