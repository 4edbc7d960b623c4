import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { chromium } from '@playwright/test';

/**
 * How every test, bench and tool finds and launches Chromium. Playwright's own download is tried, but on
 * machines that reach only the npm registry and Debian's packages it fails, so Debian's build is the
 * usual one here. The flags keep Chromium from reaching for the network on its own.
 */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** What to run by hand when no Chromium is found and none could be installed. */
export const CHROMIUM_HELP =
  'No Chromium found for the end-to-end tests. Install one with `npx playwright install chromium`, ' +
  'or on Debian/Ubuntu `sudo apt-get install chromium`, or set CHROMIUM_PATH to a Chromium or Chrome binary.';

export class ChromiumMissingError extends Error {
  readonly code = 'CHROMIUM_MISSING';
  constructor(message = CHROMIUM_HELP) {
    super(message);
    this.name = 'ChromiumMissingError';
  }
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/**
 * The Chromium to use, in this order: CHROMIUM_PATH; Playwright's own installed browser; Debian's
 * `/usr/bin/chromium` or a `chromium`/`chromium-browser` on PATH. Undefined when there is none.
 * A CHROMIUM_PATH that names no executable is an error rather than a silent fallback: the person asked for it.
 */
export function findChromium(): string | undefined {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) {
    if (!isExecutable(fromEnv))
      throw new ChromiumMissingError(`CHROMIUM_PATH=${fromEnv} is not an executable file.`);
    return fromEnv;
  }
  const playwrights = chromium.executablePath();
  if (playwrights && isExecutable(playwrights)) return playwrights;
  for (const candidate of ['/usr/bin/chromium', '/usr/bin/chromium-browser']) {
    if (isExecutable(candidate)) return candidate;
  }
  return onPath('chromium') ?? onPath('chromium-browser');
}

/** The Chromium to launch, or a ChromiumMissingError that says which command installs one. */
export function chromiumPath(): string {
  const found = findChromium();
  if (!found) throw new ChromiumMissingError();
  return found;
}

/**
 * Launch options for Playwright's `chromium.launch`. Evaluated when called, after any install.
 * `CHROMIUM_FLAGS` (space-separated) adds flags: bench/traceDeopts.ts passes V8's through it.
 */
export function chromiumLaunch(): { executablePath: string; args: string[] } {
  const extra = (process.env.CHROMIUM_FLAGS ?? '').split(' ').filter(Boolean);
  return { executablePath: chromiumPath(), args: [...CHROMIUM_ARGS, ...extra] };
}

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/**
 * Finds a Chromium, installing one when there is none: Playwright's download first (where its host is
 * reachable it is the browser Playwright is tested with), then Debian's `chromium` when running as root
 * with apt-get. Throws ChromiumMissingError, naming the command to run, when neither works.
 */
export function ensureChromium(log: (line: string) => void = (line) => console.error(line)): string {
  const found = findChromium();
  if (found) return found;

  log('No Chromium found; trying `npx playwright install chromium`…');
  const playwright = spawnSync('npx', ['playwright', 'install', 'chromium'], {
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: 10 * 60_000,
  });
  if (playwright.status === 0) {
    const installed = findChromium();
    if (installed) return installed;
  }
  log("Playwright's browser download is not reachable from here.");

  if (isRoot() && onPath('apt-get')) {
    log("Installing Debian's chromium with apt-get…");
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    try {
      execFileSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'inherit', 'inherit'], env });
      execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], {
        stdio: ['ignore', 'inherit', 'inherit'],
        env,
      });
    } catch (err) {
      log(`apt-get failed: ${(err as Error).message}`);
    }
    const installed = findChromium();
    if (installed) return installed;
  }
  throw new ChromiumMissingError();
}
