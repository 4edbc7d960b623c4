// Rasterises the app icons (assets/*.svg) to the PNGs the web app manifest lists, in public/icons/, with the
// same Chromium the end-to-end tests use. Run after editing an SVG: `npx tsx assets/renderIcons.ts`.

import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from '@playwright/test';
import { chromiumLaunch } from '../e2e/chromium.ts';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '../public/icons');

/** Which SVG becomes which PNG, at which size (the manifest lists the same names). */
export const ICONS = [
  { svg: 'icon.svg', png: 'icon-192.png', size: 192 },
  { svg: 'icon.svg', png: 'icon-512.png', size: 512 },
  { svg: 'icon-maskable.svg', png: 'icon-maskable-192.png', size: 192 },
  { svg: 'icon-maskable.svg', png: 'icon-maskable-512.png', size: 512 },
  // iOS ignores the manifest's icons and asks for this one; it masks the corners itself.
  { svg: 'icon-maskable.svg', png: 'apple-touch-icon-180.png', size: 180 },
];

mkdirSync(out, { recursive: true });
const browser = await chromium.launch(chromiumLaunch());
try {
  for (const { svg, png, size } of ICONS) {
    const page = await browser.newPage({ viewport: { width: size, height: size }, deviceScaleFactor: 1 });
    const data = readFileSync(join(here, svg)).toString('base64');
    await page.setContent(
      `<style>html,body{margin:0;background:transparent}img{display:block}</style>` +
        `<img width="${size}" height="${size}" src="data:image/svg+xml;base64,${data}">`,
    );
    await page.locator('img').evaluate((img: HTMLImageElement) => img.decode());
    await page.screenshot({ path: join(out, png), omitBackground: true });
    await page.close();
    console.log(`public/icons/${png} (${size}×${size}) from assets/${svg}`);
  }
} finally {
  await browser.close();
}
copyFileSync(join(here, 'icon.svg'), join(here, '../public/favicon.svg'));
