import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from '@playwright/test';
import sirv from 'sirv';
import { chromiumLaunch } from '../e2e/chromium.ts';
import { HeapSampler } from './heapSampler.ts';
import type { PageReady } from './page/benchPage.ts';

/**
 * Serves a built page (the bench page in .cache/bench-page, the app in .cache/bench-app) on its own origin,
 * so git requests are cross-origin as in the app.
 */
export async function serveBuiltPage(distDir: string): Promise<{ url: string; close(): Promise<void> }> {
  const assets = sirv(distDir, { dev: false, etag: true });
  const server: Server = createServer((req, res) => assets(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Profiles not yet closed, so an interrupted run can close them and remove their folders. */
const openProfiles = new Set<() => Promise<void>>();

let shuttingDown = false;

/** Closes every profile still open, and opens no more: the run was interrupted. */
export async function closeAllProfiles(): Promise<void> {
  shuttingDown = true;
  await Promise.all([...openProfiles].map((close) => close().catch(() => undefined)));
}

export interface FreshProfile {
  page: Page;
  heap: HeapSampler;
  ready: PageReady;
  close(): Promise<void>;
}

/**
 * Chromium with a new, empty, on-disk profile: nothing in IndexedDB, no HTTP or preflight cache, no service
 * worker, as a first visit. On disk rather than incognito, because incognito keeps IndexedDB in memory
 * under a smaller quota, which is not where users' repositories live. Nothing is loaded yet.
 */
export async function launchFreshProfile(): Promise<{
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}> {
  if (shuttingDown) throw new Error('The bench is shutting down.');
  const userDataDir = await mkdtemp(join(tmpdir(), 'blobless-bench-profile-'));
  let context: BrowserContext | undefined;
  // Registered before Chromium starts, so an interrupt while it starts still removes the folder. Once:
  // the interrupt and the measurement's own `finally` may both call it.
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      openProfiles.delete(close);
      await context?.close().catch(() => undefined);
      await rm(userDataDir, { recursive: true, force: true });
    })();
    return closing;
  };
  openProfiles.add(close);
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      ...chromiumLaunch(),
      headless: true,
      // run.ts handles these signals itself, closing profiles and removing their folders before it exits.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
    const page = context.pages()[0] ?? (await context.newPage());
    return { context, page, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** A fresh profile (launchFreshProfile) on the bench page, its worker started and its start-up calls answered. */
export async function openFreshProfile(pageUrl: string): Promise<FreshProfile> {
  const fresh = await launchFreshProfile();
  let heap: HeapSampler | undefined;
  const close = async () => {
    await heap?.stop();
    await fresh.close();
  };
  try {
    const { page } = fresh;
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(pageUrl);
    await page
      .waitForFunction(() => window.bench !== undefined)
      .catch(() => {
        throw new Error(`The bench page did not start: ${errors.join('; ') || 'no window.bench'}`);
      });
    heap = await HeapSampler.attach(page);
    const ready = await page.evaluate(() => window.bench.ready());
    // The Blobless column measures what the app's start-up leaves: the page must have made its calls.
    if (ready.startupCalls.join() !== ready.expectedStartupCalls.join()) {
      throw new Error(
        `The bench page made the start-up calls ${ready.startupCalls.join(', ')}, not the app's ${ready.expectedStartupCalls.join(', ')}.`,
      );
    }
    return { page, heap, ready, close };
  } catch (err) {
    await close();
    throw err;
  }
}

export async function chromiumVersion(): Promise<string> {
  const browser = await chromium.launch(chromiumLaunch());
  try {
    return browser.version();
  } finally {
    await browser.close();
  }
}
