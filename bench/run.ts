/**
 * `npm run bench`: git's partial-clone perf test (t/perf/p5600-partial-clone.sh), with the git CLI,
 * isomorphic-git and Blobless side by side in one run, so the machine's noise cancels out in the ratios.
 * bench/README.md says what every cell measures.
 *
 *   npm run bench -- [--url URL]... [--sizes small,medium,large,real,tags] [--runs N] [--iso-cap-s S]
 *                    [--op-timeout-s S] [--file PATH] [--out FILE] [--fixtures-dir DIR] [--skip-build]
 *                    [--profile] [--cpu-profile DIR] [--mark-phases] [--skip blame,...] [--only history]
 *                    [--merge]
 *
 * `--cpu-profile DIR` writes the git worker's CPU profile of each Blobless clone and checkout to DIR
 * (`<repo>-<run>-blobless.clone.cpuprofile`, for DevTools or bench/cpuProfileSummary.ts), from a bench page
 * built without minifying, so that functions keep their names. `--mark-phases` marks the start of the clone
 * and of the checkout in V8's deoptimization trace (bench/deoptMarks.ts), for bench/traceDeopts.ts.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'vite';
import { fixtureServerOptions } from '../server/fixtures/fixtureServerOptions.ts';
import { ensureFixtures, SIZED_PRESETS } from '../server/fixtures/index.ts';
import { type GitServer, startGitServer } from '../server/gitServer.ts';
import { chromiumVersion, closeAllProfiles, openFreshProfile, serveBuiltPage } from './browser.ts';
import { type CountingRelay, startCountingRelay } from './countingRelay.ts';
import { measureDeepLink } from './deepLink.ts';
import { markPhase } from './deoptMarks.ts';
import { measureGitCli, measureGitHistory, pickFile } from './gitCli.ts';
import type { HeapSampler } from './heapSampler.ts';
import type { UpcomingOperation } from './page/benchPage.ts';
import {
  fmtBytes,
  formatProfile,
  formatTable,
  type HistorySample,
  mergeHistoryCells,
  mergeRepos,
  type PhaseSample,
  type ProfileSample,
  type RepoResult,
  type RunSample,
  summarize,
} from './report.ts';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH_DIR, '..');
/** Where bench/vite.config.ts builds the bench page. */
const PAGE_DIR = join(ROOT, '.cache', 'bench-page');
/** Where the app itself is built for the deep-link cell (the project's vite.config.ts, as `npm run build`). */
const APP_DIR = join(ROOT, '.cache', 'bench-app');

/**
 * The sizes: the fixture each one serves, how many runs, and isomorphic-git's time cap. `tags` (not in the
 * default run) is tags.git, 1,000 tags on 1,000 commits: what a no-op fetch costs on a long-lived project;
 * `tags50` the same with 50 branches.
 */
const SIZES = {
  small: { repo: 'small-sized.git', runs: 3, isoCapS: 60 },
  medium: { repo: `${SIZED_PRESETS.medium.name}.git`, runs: 3, isoCapS: 120 },
  large: { repo: `${SIZED_PRESETS.large.name}.git`, runs: 1, isoCapS: 120 },
  real: { repo: `${SIZED_PRESETS.real.name}.git`, runs: 1, isoCapS: 120 },
  tags: { repo: 'tags.git', runs: 3, isoCapS: 60 },
  tags50: { repo: 'tags-50.git', runs: 3, isoCapS: 60 },
} as const;
type Size = keyof typeof SIZES;

interface BenchRepo {
  name: string;
  /** As given or served: what results.json names. */
  url: string;
  /** The same repository through the counting relay: what every contender is pointed at. */
  relayed: string;
  relay: CountingRelay;
  runs: number;
  isoCapS: number;
}

const log = (text: string) => process.stderr.write(`${text}\n`);
const elapsed = (since: number) => `${((performance.now() - since) / 1000).toFixed(0)} s`;

function parseOptions() {
  const { values } = parseArgs({
    options: {
      url: { type: 'string', multiple: true },
      sizes: { type: 'string' },
      runs: { type: 'string' },
      'iso-cap-s': { type: 'string' },
      'op-timeout-s': { type: 'string', default: '300' },
      'fixtures-dir': { type: 'string' },
      file: { type: 'string' },
      out: { type: 'string', default: join(BENCH_DIR, 'results.json') },
      'skip-build': { type: 'boolean', default: false },
      profile: { type: 'boolean', default: false },
      'cpu-profile': { type: 'string' },
      'mark-phases': { type: 'boolean', default: false },
      skip: { type: 'string' },
      only: { type: 'string' },
      merge: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('*/')[0]);
    process.exit(0);
  }
  const positive = (name: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!(n > 0)) throw new Error(`--${name} takes a positive number, not ${value}.`);
    return n;
  };
  const sizes = (values.sizes ?? 'small,medium,large').split(',').filter(Boolean);
  for (const size of sizes) {
    if (!(size in SIZES)) throw new Error(`--sizes takes small, medium, large, real and tags, not ${size}.`);
  }
  const runs = positive('runs', values.runs);
  if (runs !== undefined && !Number.isInteger(runs)) throw new Error('--runs takes a whole number.');
  return {
    urls: values.url ?? [],
    sizes: sizes as Size[],
    runs,
    isoCapS: positive('iso-cap-s', values['iso-cap-s']),
    opTimeoutS: positive('op-timeout-s', values['op-timeout-s'])!,
    fixturesDir: values['fixtures-dir'],
    file: values.file,
    out: resolve(values.out),
    skipBuild: values['skip-build'],
    profile: values.profile,
    cpuProfileDir: values['cpu-profile'] === undefined ? undefined : resolve(values['cpu-profile']),
    markPhases: values['mark-phases'],
    skip: new Set(parseSkip(values.skip)),
    only: parseOnly(values.only),
    merge: values.merge,
  };
}

const SKIPPABLE = [
  'openOneFile',
  'blame',
  'embedOneFile',
  'noopFetch',
  'firstView',
  'deepLink',
  'isogit',
  'history',
] as const;
type Skippable = (typeof SKIPPABLE)[number];

/** `--only history`: the history cells alone, merged into the results file's other cells, which are kept. */
function parseOnly(value: string | undefined): 'history' | null {
  if (value === undefined) return null;
  if (value !== 'history') throw new Error(`--only takes history, not ${value}.`);
  return value;
}

/** The first page of file history, as the app's history view asks for it (src/views/FileHistoryView.tsx). */
const FILE_HISTORY_PAGE = 50;

function parseSkip(value: string | undefined): Skippable[] {
  const names = (value ?? '').split(',').filter(Boolean);
  for (const name of names) {
    if (!(SKIPPABLE as readonly string[]).includes(name)) {
      throw new Error(`--skip takes ${SKIPPABLE.join(', ')}, not ${name}.`);
    }
  }
  return names as Skippable[];
}

async function main() {
  const started = performance.now();
  const opts = parseOptions();
  const closers: (() => Promise<void>)[] = [];
  try {
    if (!opts.skipBuild) {
      log('bench: building the bench page into .cache/bench-page');
      await build({
        configFile: join(BENCH_DIR, 'vite.config.ts'),
        logLevel: 'warn',
        // A profile names the functions it sampled only if the build kept their names.
        ...(opts.cpuProfileDir ? { build: { minify: false } } : {}),
      });
      if (!opts.skip.has('deepLink')) {
        log('bench: building the app into .cache/bench-app');
        await build({
          configFile: join(ROOT, 'vite.config.ts'),
          root: ROOT,
          logLevel: 'warn',
          build: { outDir: APP_DIR, emptyOutDir: true, sourcemap: false },
        });
      }
    }
    const pageServer = await serveBuiltPage(PAGE_DIR);
    closers.push(pageServer.close);
    // Built and served only for the deep-link cell: `--skip deepLink` has no app to serve.
    const appServer = opts.skip.has('deepLink') ? null : await serveBuiltPage(APP_DIR);
    if (appServer) closers.push(appServer.close);

    const relays = new Map<string, CountingRelay>();
    const relayFor = async (url: string) => {
      const origin = new URL(url).origin;
      let relay = relays.get(origin);
      if (!relay) {
        relay = await startCountingRelay({ upstream: origin });
        relays.set(origin, relay);
        closers.push(relay.close);
      }
      return relay;
    };

    const repos: BenchRepo[] = [];
    if (opts.urls.length > 0) {
      for (const url of opts.urls) {
        const relay = await relayFor(url);
        repos.push({
          name: url,
          url,
          relayed: relay.relayed(url),
          relay,
          runs: opts.runs ?? 3,
          isoCapS: opts.isoCapS ?? SIZES.medium.isoCapS,
        });
      }
    } else {
      log(`bench: fixtures ${opts.sizes.join(', ')} (built once, then cached in .cache/fixtures)`);
      const fixturesStarted = performance.now();
      const fixtures = await ensureFixtures({
        dir: opts.fixturesDir,
        sized: opts.sizes
          .filter((s): s is keyof typeof SIZED_PRESETS => s in SIZED_PRESETS)
          .map((s) => SIZED_PRESETS[s]),
      });
      log(`bench: fixtures ready in ${elapsed(fixturesStarted)}`);
      const server: GitServer = await startGitServer(fixtureServerOptions(fixtures.dir));
      closers.unshift(server.close);
      for (const size of opts.sizes) {
        const url = `${server.url}/${SIZES[size].repo}`;
        const relay = await relayFor(url);
        repos.push({
          name: size,
          url,
          relayed: relay.relayed(url),
          relay,
          runs: opts.runs ?? SIZES[size].runs,
          isoCapS: opts.isoCapS ?? SIZES[size].isoCapS,
        });
      }
    }

    const results: RepoResult[] = [];
    const ops: OperationState = {
      available: new Set(),
      missing: new Set(),
      timedOut: new Set(),
      timeoutMs: opts.opTimeoutS * 1000,
    };
    const pages = { bench: pageServer.url, app: appServer?.url ?? '' };
    for (const repo of repos) results.push(await benchRepo(repo, pages, opts, ops));

    const machine = {
      nproc: availableParallelism(),
      memoryGB: Math.round(totalmem() / 1024 ** 3),
      cpu: cpus()[0]?.model ?? 'unknown',
      chromium: await chromiumVersion(),
      git: execFileSync('git', ['--version'], { encoding: 'utf8' }).trim(),
      node: process.version,
      isomorphicGit: packageVersion('isomorphic-git'),
    };
    const durationS = Math.round((performance.now() - started) / 1000);
    const report = {
      schema: 1,
      date: new Date().toISOString(),
      durationS,
      machine,
      options: {
        urls: opts.urls,
        sizes: opts.urls.length > 0 ? [] : opts.sizes,
        runs: opts.runs ?? null,
        isoCapS: opts.isoCapS ?? null,
      },
      notAvailable: [...ops.missing].filter((op) => !ops.available.has(op)),
      timedOut: [...ops.timedOut],
      repos: results,
    };
    const written = opts.only
      ? mergeHistoryCells(await readResults(opts.out), report)
      : opts.merge
        ? mergeRepos(await readResults(opts.out), report)
        : report;
    await writeFile(opts.out, `${JSON.stringify(written, null, 2)}\n`);
    const table = formatTable(results);
    process.stdout.write(`\n${table}\n\n`);
    if (opts.profile) process.stdout.write(`${formatProfile(results)}\n\n`);
    process.stdout.write(
      `${report.date.slice(0, 10)}, ${machine.nproc} cores, ${machine.memoryGB} GB, ${machine.cpu}, Chromium ${machine.chromium}, ${machine.git}, Node ${machine.node}, isomorphic-git ${machine.isomorphicGit}. Total ${durationS} s.\n`,
    );
    for (const r of results) for (const note of r.notes) process.stdout.write(`${r.name}: ${note}\n`);
    log(`bench: wrote ${opts.out}`);
  } finally {
    for (const close of closers) await close().catch(() => undefined);
  }
}

type RunOptions = ReturnType<typeof parseOptions>;

async function readResults(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return null;
    throw err;
  }
}

/** Where the bench page and the built app are served. */
interface Pages {
  bench: string;
  app: string;
}

async function benchRepo(
  repo: BenchRepo,
  pages: Pages,
  opts: RunOptions,
  ops: OperationState,
): Promise<RepoResult> {
  const fileOverride = opts.file;
  const notes = new Set<string>();
  const { relay } = repo;
  relay.setPhase(`${repo.name}/setup`);
  // Also the warm-up: the server's first clone of a repository reads it from disk.
  const picked = await pickFile(repo.relayed);
  const file = fileOverride ?? picked.path;
  const historyFile = fileOverride ?? picked.busiest.path;
  log(`\nbench: ${repo.name} (${picked.files} files at HEAD; opening ${file}), ${repo.runs} run(s)`);
  if (!opts.skip.has('history')) {
    log(
      `bench: ${repo.name}: history cells on ${historyFile} (${picked.busiest.commits} commits changed it)`,
    );
  }

  const samples: RunSample[] = [];
  for (let run = 0; run < repo.runs; run++) {
    // Alternating order: what runs first in one run runs last in the next, so warm caches favour no one.
    const order = run % 2 === 0 ? ['git', 'blobless', 'isogit'] : ['isogit', 'blobless', 'git'];
    const sample: RunSample = { run, order };
    const tag = `[${repo.name} ${run + 1}/${repo.runs}]`;
    const phaseName = (contender: string, phase: string) => `${repo.name}#${run}/${contender}.${phase}`;
    const measured = async (contender: string, phase: string, s: number | null): Promise<PhaseSample> => {
      await relay.idle();
      const stats = relay.stats(phaseName(contender, phase));
      if (s !== null) {
        log(
          `${tag} ${contender} ${phase}: ${s.toFixed(2)} s, ${fmtBytes(stats.bytesSent)}, ${stats.requests} requests`,
        );
      }
      return { s, stats };
    };

    for (const contender of opts.only ? [] : order) {
      try {
        if (contender === 'git') {
          const times = await measureGitCli(repo.relayed, {
            phase: (name) => relay.setPhase(phaseName('git', name)),
          });
          sample.git = {
            cloneNoBlobs: await measured('git', 'cloneNoBlobs', times.cloneNoBlobs),
            checkout: await measured('git', 'checkout', times.checkout),
            fullClone: await measured('git', 'fullClone', times.fullClone),
            noopFetch: await measured('git', 'noopFetch', times.noopFetch),
          };
        } else if (contender === 'isogit') {
          if (opts.skip.has('isogit')) continue;
          const profile = await openFreshProfile(pages.bench);
          try {
            profile.heap.reset();
            relay.setPhase(phaseName('isogit', 'clone'));
            // The page stops isomorphic-git at its cap; the timeout is for a page that stops answering.
            const t = await withTimeout(
              profile.page.evaluate(([url, cap]) => window.bench.isogitClone(url, cap), [
                repo.relayed,
                repo.isoCapS * 1000,
              ] as const),
              repo.isoCapS * 1000 + ops.timeoutMs,
              'isomorphic-git clone',
            );
            await profile.heap.sample();
            if (t.error) notes.add(`isomorphic-git failed: ${t.error}`);
            else if (!t.finished)
              notes.add(`isomorphic-git did not finish within its ${repo.isoCapS} s cap.`);
            sample.isogit = {
              clone: await measured('isogit', 'clone', t.ms / 1000),
              finished: t.finished,
              error: t.error,
              peakHeapMB: profile.heap.peakMB('isogit.worker'),
            };
            if (!t.finished) log(`${tag} isogit stopped: ${t.error ?? `time cap of ${repo.isoCapS} s`}`);
          } finally {
            await profile.close();
          }
        } else {
          sample.blobless = await measureBlobless(repo, pages, file, phaseName, measured, ops, notes, opts);
        }
      } catch (err) {
        const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
        notes.add(`${contender} failed in run ${run + 1}: ${message}`);
        log(`${tag} ${contender} failed: ${message}`);
      }
    }
    if (!opts.skip.has('history')) {
      sample.history = {};
      for (const contender of run % 2 === 0 ? ['git', 'blobless'] : ['blobless', 'git']) {
        try {
          if (contender === 'git') {
            const t = await measureGitHistory(repo.relayed, historyFile, FILE_HISTORY_PAGE, {
              phase: (name) => relay.setPhase(phaseName('git', name)),
            });
            sample.history.git = {
              logFollow: await measured('git', 'logFollow', t.logFollow),
              logFollowFirstPage_s: t.logFollowFirstPage,
              commitGraphWrite: await measured('git', 'commitGraphWrite', t.commitGraphWrite),
              commitGraphBytes: t.commitGraphBytes,
              logFollowChangedPaths: await measured('git', 'logFollowChangedPaths', t.logFollowChangedPaths),
              logFollowFirstPageChangedPaths_s: t.logFollowFirstPageChangedPaths,
              followCommits: t.followCommits,
              blame: await measured('git', 'blame', t.blame),
              blameLines: t.blameLines,
            };
          } else {
            sample.history.blobless = await measureBloblessHistory(
              repo,
              pages.bench,
              historyFile,
              phaseName,
              measured,
              ops,
            );
          }
        } catch (err) {
          const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
          notes.add(`${contender} history cells failed in run ${run + 1}: ${message}`);
          log(`${tag} ${contender} history cells failed: ${message}`);
        }
      }
    }
    samples.push(sample);
  }
  return summarize({ name: repo.name, url: repo.url, file, historyFile, isoCapS: repo.isoCapS }, samples, [
    ...notes,
  ]);
}

/**
 * Blobless's history cells, in one fresh profile: a clone with the whole history (no blobs), then a wait
 * for the commit-graph the worker writes after it (its build time is the sum of the worker's
 * `blobless:commitGraph:*` timeline measures). Each cell then runs in a new worker (the page reloaded, the
 * repository stored), after an untimed readTree of the folder a person comes from, so no cell reuses
 * another's walk: file history's first page, blame, and the last commits of the root and of the file's
 * folder.
 */
async function measureBloblessHistory(
  repo: BenchRepo,
  pageUrl: string,
  file: string,
  phaseName: (contender: string, phase: string) => string,
  measured: (contender: string, phase: string, s: number | null) => Promise<PhaseSample>,
  ops: OperationState,
): Promise<NonNullable<HistorySample['blobless']>> {
  const { relay } = repo;
  const folder = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '';
  const profile = await openFreshProfile(pageUrl);
  try {
    const { page } = profile;
    relay.setPhase(phaseName('blobless', 'historyClone'));
    const cloned = await withTimeout(
      page.evaluate((url) => window.bench.bloblessHistoryClone(url), repo.relayed),
      ops.timeoutMs,
      'Blobless clone and commit-graph',
    );
    const clone = await measured('blobless', 'historyClone', cloned.cloneMs / 1000);
    const raw = await profile.heap.evaluate(
      'git.worker',
      `JSON.stringify(performance.getEntriesByType('measure').filter((e) => e.name.startsWith('blobless:commitGraph:')).map((e) => [e.name.slice(21), e.duration]))`,
    );
    // Each step summed over the writes (one inline, or an inline attempt then the background write).
    const steps: Record<string, number> = {};
    for (const [name, ms] of raw ? (JSON.parse(raw) as [string, number][]) : []) {
      steps[name] = (steps[name] ?? 0) + ms / 1000;
    }
    const buildMs = raw ? Object.values(steps).reduce((a, b) => a + b, 0) * 1000 : null;
    log(
      `[${repo.name}] blobless commit-graph: ${Object.entries(steps)
        .map(([name, sec]) => `${name} ${sec.toFixed(2)} s`)
        .join(
          ', ',
        )}; ${cloned.graph.commits} commits, ${cloned.graph.layers} layers, ${fmtBytes(cloned.graph.bytes)}`,
    );
    const { repoId, ref } = cloned;
    const inNewWorker = async <T extends { ms: number }>(
      phase: string,
      from: string,
      run: () => Promise<T>,
    ): Promise<{ sample: PhaseSample; result: T }> => {
      await page.reload();
      await page.waitForFunction(() => window.bench !== undefined);
      await page.evaluate(() => window.bench.ready());
      relay.setPhase(phaseName('blobless', `${phase}.folder`));
      await page.evaluate(([id, r, path]) => window.bench.bloblessOpenFolder(id, r, path), [
        repoId,
        ref,
        from,
      ] as const);
      relay.setPhase(phaseName('blobless', phase));
      const result = await withTimeout(run(), ops.timeoutMs, `Blobless ${phase}`);
      return { sample: await measured('blobless', phase, result.ms / 1000), result };
    };
    const history = await inNewWorker('fileHistoryFirstPage', folder, () =>
      page.evaluate(([id, r, path, limit]) => window.bench.bloblessFileHistory(id, r, path, limit), [
        repoId,
        ref,
        file,
        FILE_HISTORY_PAGE,
      ] as const),
    );
    const blame = await inNewWorker('historyBlame', folder, () =>
      page.evaluate(([id, r, path]) => window.bench.bloblessBlame(id, r, path), [repoId, ref, file] as const),
    );
    const rootLast = await inNewWorker('lastCommits', '', () =>
      page.evaluate(([id, r]) => window.bench.bloblessLastCommits(id, r, ''), [repoId, ref] as const),
    );
    const folderLast = await inNewWorker('lastCommitsFolder', folder, () =>
      page.evaluate(([id, r, path]) => window.bench.bloblessLastCommits(id, r, path), [
        repoId,
        ref,
        folder,
      ] as const),
    );
    return {
      clone,
      commitGraphBuild_s: buildMs === null ? null : buildMs / 1000,
      commitGraphSteps_s: steps,
      commitGraphWait_s: cloned.graphWaitMs / 1000,
      graph: cloned.graph,
      fileHistoryFirstPage: history.sample,
      fileHistoryEntries: history.result.entries,
      blame: blame.sample,
      blameVersions: blame.result.versionsFetched,
      blameLines: blame.result.lines,
      lastCommits: rootLast.sample,
      lastCommitsEntries: rootLast.result.entries,
      lastCommitsFolder: folderLast.sample,
      lastCommitsFolderEntries: folderLast.result.entries,
    };
  } finally {
    await profile.close();
  }
}

/** Shared across repositories: what the worker has, and what timed out (not tried again in this run). */
interface OperationState {
  available: Set<UpcomingOperation>;
  missing: Set<UpcomingOperation>;
  timedOut: Set<string>;
  timeoutMs: number;
}

class OperationTimeout extends Error {}

/**
 * An operation in the page that does not answer within the timeout is given up on; closing its profile
 * afterwards stops it. A hang costs the run one timeout, not the whole budget.
 */
async function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new OperationTimeout(`${what} did not answer within ${ms / 1000} s`)),
      ms,
    );
  });
  // Once given up on, its rejection (the page closing under it) is expected and ignored.
  work.catch(() => undefined);
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function measureBlobless(
  repo: BenchRepo,
  pages: Pages,
  file: string,
  phaseName: (contender: string, phase: string) => string,
  measured: (contender: string, phase: string, s: number | null) => Promise<PhaseSample>,
  ops: OperationState,
  notes: Set<string>,
  opts: RunOptions,
): Promise<NonNullable<RunSample['blobless']>> {
  const { relay } = repo;
  const notMeasured = (phase: string) => measured('blobless', phase, null);
  const has = (op: UpcomingOperation, available: boolean) => {
    if (available) {
      ops.available.add(op);
      return true;
    }
    ops.missing.add(op);
    notes.add(`Blobless ${op}: not available (workers/api.ts has no ${op} yet), reported as null.`);
    return false;
  };
  /** One timed phase; a failure or timeout leaves its cells null with a note, and the others go on. */
  const phase = async (
    name: 'cloneNoBlobs' | 'checkout' | Skippable,
    run: () => Promise<{ ms: number }>,
  ): Promise<PhaseSample> => {
    if (ops.timedOut.has(name) || opts.skip.has(name as Skippable)) return notMeasured(name);
    relay.setPhase(phaseName('blobless', name));
    try {
      const t = await withTimeout(run(), ops.timeoutMs, `Blobless ${name}`);
      return measured('blobless', name, t.ms / 1000);
    } catch (err) {
      const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
      if (err instanceof OperationTimeout) {
        ops.timedOut.add(name);
        notes.add(`${message}; not tried again in this run.`);
      } else {
        notes.add(`Blobless ${name} failed: ${message}`);
      }
      log(`[${repo.name}] blobless ${name}: ${message}`);
      return notMeasured(name);
    }
  };

  // Clone without blobs and checkout of the result, in one fresh profile, as p5600 chains them.
  const profile = await openFreshProfile(pages.bench);
  let cloneNoBlobs: PhaseSample;
  let checkout = await notMeasured('checkout');
  let noopFetch = await notMeasured('noopFetch');
  let peakHeapMB: number | null;
  let longestMainTaskMs: number | null = null;
  let clonePeakHeapMB: number | null = null;
  let checkoutPeakHeapMB: number | null = null;
  let canRead: boolean;
  let profileSample: ProfileSample | undefined;
  try {
    const { available } = profile.ready;
    const { page } = profile;
    canRead = has('readFile', available.readFile);
    profile.heap.reset();
    await page.evaluate(() => window.bench.mainThreadLongTasks());
    let cloned: { repoId: string; ref: string } | undefined;
    // As a person: the URL field taken (the warm-up starts and ends), then the clone.
    await page.evaluate(() => window.bench.cloneFieldFocused());
    if (opts.markPhases) await markPhase(page, 'clone');
    cloneNoBlobs = await phase('cloneNoBlobs', () =>
      cpuProfiled(profile.heap, opts, phaseName('blobless', 'clone'), async () => {
        const t = await page.evaluate((url) => window.bench.bloblessClone(url), repo.relayed);
        cloned = t;
        return t;
      }),
    );
    const done = cloned;
    await profile.heap.sample();
    clonePeakHeapMB = profile.heap.peakMB('git.worker');
    if (opts.profile && done) profileSample = await readProfile(profile);
    profile.heap.reset();
    if (opts.markPhases) await markPhase(page, 'checkout');
    if (done && has('checkout', available.checkout)) {
      checkout = await phase('checkout', () =>
        cpuProfiled(profile.heap, opts, phaseName('blobless', 'checkout'), () =>
          page.evaluate(([id, ref]) => window.bench.bloblessCheckout(id, ref), [
            done.repoId,
            done.ref,
          ] as const),
        ),
      );
    }
    if (opts.profile && profileSample && checkout.s !== null) {
      profileSample.checkoutSteps = (await readProfile(profile, 'checkout')).steps;
    }
    longestMainTaskMs = (await page.evaluate(() => window.bench.mainThreadLongTasks())).longestMs;
    await profile.heap.sample();
    checkoutPeakHeapMB = profile.heap.peakMB('git.worker');
    peakHeapMB =
      clonePeakHeapMB === null && checkoutPeakHeapMB === null
        ? null
        : Math.max(clonePeakHeapMB ?? 0, checkoutPeakHeapMB ?? 0);
    if (done && has('fetch', available.fetch)) {
      noopFetch = await phase('noopFetch', () =>
        page.evaluate((id) => window.bench.bloblessNoopFetch(id), done.repoId),
      );
    }
  } finally {
    await profile.close();
  }

  // One file, cold: a new profile, from nothing to the file's bytes (clone without blobs + readFile).
  // Then blame of that file in the same profile: every other version of it is still on the server.
  let openOneFile = await notMeasured('openOneFile');
  let blame = await notMeasured('blame');
  if (canRead) {
    const cold = await openFreshProfile(pages.bench);
    try {
      let opened: { repoId: string; ref: string } | undefined;
      openOneFile = await phase('openOneFile', async () => {
        const t = await cold.page.evaluate(([url, path]) => window.bench.bloblessOpenOneFile(url, path), [
          repo.relayed,
          file,
        ] as const);
        opened = t;
        return t;
      });
      const done = opened;
      if (done) {
        blame = await phase('blame', () =>
          cold.page.evaluate(([id, ref, path]) => window.bench.bloblessBlame(id, ref, path), [
            done.repoId,
            done.ref,
            file,
          ] as const),
        );
      }
    } finally {
      await cold.close();
    }
  }
  // The widget's case: in yet another fresh profile, readFileMinimal through the widget's worker.
  let embedOneFile = await notMeasured('embedOneFile');
  if (!opts.skip.has('embedOneFile')) {
    const widget = await openFreshProfile(pages.bench);
    try {
      embedOneFile = await phase('embedOneFile', () =>
        widget.page.evaluate(([url, path]) => window.bench.embedOneFile(url, path), [
          repo.relayed,
          file,
        ] as const),
      );
    } finally {
      await widget.close();
    }
  }
  // The app's first view of a new clone, in a fresh profile: the tip's tree and README, history to follow.
  let firstView = await notMeasured('firstView');
  if (!opts.skip.has('firstView')) {
    const first = await openFreshProfile(pages.bench);
    try {
      await first.page.evaluate(() => window.bench.cloneFieldFocused());
      firstView = await phase('firstView', () =>
        first.page.evaluate((url) => window.bench.bloblessFirstView(url), repo.relayed),
      );
      if (opts.profile && profileSample && firstView.s !== null) {
        profileSample.firstViewSteps = (await readProfile(first)).steps;
      }
    } finally {
      await first.close();
    }
  }
  // The deep link, cold: the built app opened at ?repo=, in a fresh profile, to the repository shown.
  let deepLinkCold = await notMeasured('deepLink');
  if (!opts.skip.has('deepLink')) {
    deepLinkCold = await phase('deepLink', () =>
      measureDeepLink(pages.app, repo.relayed, {
        timeoutMs: ops.timeoutMs,
        // The history fill the app starts behind the view counts elsewhere.
        onShown: () => relay.setPhase(`${repo.name}/after-deep-link`),
      }),
    );
  }
  return {
    cloneNoBlobs,
    checkout,
    openOneFile,
    embedOneFile,
    firstView,
    deepLinkCold,
    profile: profileSample,
    noopFetch,
    blame,
    peakHeapMB,
    clonePeakHeapMB,
    checkoutPeakHeapMB,
    longestMainTaskMs,
  };
}

/**
 * `--cpu-profile DIR`: runs `operation` with the git worker's V8 profiler on and writes what it sampled to
 * DIR as `<phase>.cpuprofile`. The profiler slows the worker: such a run's times are not the bench's.
 */
async function cpuProfiled<T>(
  heap: HeapSampler,
  opts: RunOptions,
  name: string,
  operation: () => Promise<T>,
) {
  if (!opts.cpuProfileDir) return operation();
  await heap.command('git.worker', 'Profiler.enable');
  await heap.command('git.worker', 'Profiler.setSamplingInterval', { interval: 100 });
  await heap.command('git.worker', 'Profiler.start');
  try {
    return await operation();
  } finally {
    const answer = (await heap.command('git.worker', 'Profiler.stop')) as { profile?: unknown } | undefined;
    if (answer?.profile) {
      await mkdir(opts.cpuProfileDir, { recursive: true });
      const file = join(opts.cpuProfileDir, `${name.replace(/[^\w.-]+/g, '-')}.cpuprofile`);
      await writeFile(file, JSON.stringify(answer.profile));
      log(`bench: wrote ${file}`);
    }
  }
}

/** `--profile`: the page's startup times and the worker's User Timing measures of the clone just run. */
async function readProfile(
  profile: Awaited<ReturnType<typeof openFreshProfile>>,
  op: 'clone' | 'checkout' = 'clone',
): Promise<ProfileSample> {
  const startup = await profile.page.evaluate(() => window.bench.startupTimes());
  const raw = await profile.heap.evaluate(
    'git.worker',
    `JSON.stringify({ timeOrigin: performance.timeOrigin, measures: performance.getEntriesByType('measure').map((e) => [e.name, e.startTime, e.duration]) })`,
  );
  const worker = raw
    ? (JSON.parse(raw) as { timeOrigin: number; measures: [string, number, number][] })
    : { timeOrigin: 0, measures: [] };
  // Each run's steps by when they began (ms from the operation's start, then how long): the waits between
  // steps, which the medians of the table do not show.
  const own = worker.measures
    .filter(([name]) => name.startsWith(`blobless:${op}:`))
    .sort((a, b) => a[1] - b[1]);
  const opStart = own.find(([name]) => name.endsWith(':total'))?.[1] ?? own[0]?.[1] ?? 0;
  const at = (start: number, ms: number) => `@${(start - opStart).toFixed(1)}+${ms.toFixed(1)}`;
  log(
    `${op} steps: ${own.map(([name, start, ms]) => `${name.split(':').at(-1)}${at(start, ms)}`).join(' ')}`,
  );
  const evaluate = worker.measures.find(([name]) => name === 'blobless:worker:evaluate');
  // The worker's modules were evaluated at this moment of the page's clock.
  const workerEvaluatedMs = evaluate ? worker.timeOrigin - startup.timeOrigin + evaluate[2] : null;
  return {
    pageLoad: startup.moduleStartMs,
    workerStart: workerEvaluatedMs === null ? null : workerEvaluatedMs - startup.workerCreatedMs,
    firstCall: startup.firstCallAnsweredMs - startup.firstCallSentMs,
    warmUp: startup.warmUpMs ?? 0,
    warmUpDone: startup.warmUpOutcome === 'done',
    steps: worker.measures
      .filter(([name]) => name.startsWith(`blobless:${op}:`))
      .sort((a, b) => a[1] - b[1])
      .map(([name, , ms]) => ({ name: name.slice(`blobless:${op}:`.length), ms })),
  };
}

function packageVersion(name: string): string {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

// Interrupted: close Chromium and remove the profile folders, rather than leave them behind.
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.once(signal, () => {
    log(`bench: ${signal}, closing Chromium`);
    const timeout = new Promise((resolveTimeout) => setTimeout(resolveTimeout, 5000));
    void Promise.race([closeAllProfiles(), timeout]).finally(() => process.exit(code));
  });
}

main().catch((err: unknown) => {
  log(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
