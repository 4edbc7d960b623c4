import * as Comlink from 'comlink';
import { STARTUP_CALLS, startUp } from '../../src/startup.ts';
import { warmUpForClone } from '../../src/warmUpForClone.ts';
import { type Engine, wrapEngine } from '../../workers/engine/client.ts';
import { engineCallName } from '../../workers/engine/remote.ts';
import type { BenchPage } from './benchPage.ts';
import type { IsogitWorkerApi } from './isogit.worker.ts';

const moduleStartMs = performance.now();

// Created as the app creates it (src/gitClient.ts), so the bench runs the worker bundle users get.
const gitWorker = new Worker(new URL('../../workers/git.worker.ts', import.meta.url), {
  type: 'module',
  name: 'git',
});
// Every call this page makes through the worker boundary, by name, as e2e/startup.spec.ts records the app's.
const callsMade: string[] = [];
const post = gitWorker.postMessage.bind(gitWorker) as (message: unknown, transfer?: Transferable[]) => void;
gitWorker.postMessage = ((message: unknown, transfer?: Transferable[]) => {
  const name = engineCallName(message);
  if (name) callsMade.push(name);
  post(message, transfer);
}) as Worker['postMessage'];
const blobless = wrapEngine(gitWorker);
const workerCreatedMs = performance.now();
// The app's start-up calls, as src/gitClient.ts makes them when the page loads.
const startup = startUp(blobless);
const startupSentMs = performance.now();
let startupAnsweredMs: number | undefined;
let startupCalls: string[] | undefined;
// `?warmUpRounds=N` sets the warm-up's rounds (0: none), for bench/warmUpAb.ts; without it, the engine's.
const warmUpRoundsParam = new URL(location.href).searchParams.get('warmUpRounds');
const warmUpRounds = warmUpRoundsParam === null ? undefined : Number(warmUpRoundsParam);
let warmUp: { ms: number; outcome: 'done' | 'stopped' } | undefined;

let isogit: { worker: Worker; api: Comlink.Remote<IsogitWorkerApi> } | undefined;
let embed: Engine | undefined;

// Main-thread responsiveness is a figure of the benchmark, not a pass/fail test: it depends on the machine.
const longTasks = { longestMs: 0, count: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    longTasks.longestMs = Math.max(longTasks.longestMs, entry.duration);
    longTasks.count++;
  }
}).observe({ type: 'longtask' });

const bench: BenchPage = {
  async ready() {
    // What the app's home view waits for before it shows the stored repositories and the clone form: the
    // person can paste a URL from then on. The warm-up, last of the start-up calls, is not waited for.
    await Promise.all([startup.listRepos, startup.startupRepair, startup.repoEvents]);
    startupAnsweredMs ??= performance.now();
    startupCalls ??= [...callsMade];
    // The engine has every operation (the old worker API was asked, operation by operation).
    return {
      available: { checkout: true, readFile: true, fetch: true },
      startupCalls,
      expectedStartupCalls: [...STARTUP_CALLS],
    };
  },

  async startupTimes() {
    if (startupAnsweredMs === undefined) throw new Error('startupTimes() before ready()');
    return {
      moduleStartMs,
      workerCreatedMs,
      firstCallSentMs: startupSentMs,
      firstCallAnsweredMs: startupAnsweredMs,
      warmUpMs: warmUp?.ms ?? null,
      warmUpOutcome: warmUp?.outcome ?? null,
      timeOrigin: performance.timeOrigin,
    };
  },

  async cloneFieldFocused() {
    // What the app's clone form does when its URL field gets focus or text (src/views/CloneForm.tsx).
    const started = performance.now();
    const outcome = await warmUpForClone(blobless, { rounds: warmUpRounds });
    warmUp = { ms: performance.now() - started, outcome };
    return warmUp;
  },

  async bloblessFirstView(url) {
    const started = performance.now();
    // What the app's clone does first (src/cloneFlow.ts): the default branch at depth 1, no blobs, no tags
    // (each tag's tip would bring its own trees: 3.0 MB instead of 0.8 MB on the large fixture); then the
    // README's blob. The history fill that follows in the app is not part of the first view.
    const result = await blobless.clone({ url, firstView: true });
    const cloned = performance.now();
    const ref = result.head.branch ?? result.head.oid;
    const tree = await blobless.repo(result.repoId).readTree({ ref });
    const readme = tree.entries.find((e) => e.type === 'blob' && /^readme(\.|$)/i.test(e.name));
    if (readme) await blobless.repo(result.repoId).readFile({ ref, path: readme.name });
    const done = performance.now();
    return {
      ms: done - started,
      cloneMs: cloned - started,
      readMs: done - cloned,
      path: readme?.name ?? null,
    };
  },

  mainThreadLongTasks() {
    const taken = { longestMs: longTasks.longestMs, count: longTasks.count };
    longTasks.longestMs = 0;
    longTasks.count = 0;
    return taken;
  },

  async bloblessClone(url) {
    const started = performance.now();
    const result = await blobless.clone({ url });
    const ms = performance.now() - started;
    return { ms, repoId: result.repoId, ref: result.head.branch ?? result.head.oid };
  },

  async bloblessCheckout(repoId, ref) {
    const started = performance.now();
    await blobless.repo(repoId).checkout({ ref });
    return { ms: performance.now() - started };
  },

  async bloblessNoopFetch(repoId) {
    const started = performance.now();
    const result = await blobless.repo(repoId).fetch();
    const ms = performance.now() - started;
    // Measured right after the clone: anything fetched would mean the cell measures something else.
    if (result.updated.length > 0 || result.newCommits > 0) {
      throw new Error(
        `the no-op fetch updated ${result.updated.length} refs and brought ${result.newCommits} commits`,
      );
    }
    return { ms };
  },

  async bloblessOpenOneFile(url, path) {
    const started = performance.now();
    const result = await blobless.clone({ url });
    const cloned = performance.now();
    const content = await blobless
      .repo(result.repoId)
      .readFile({ ref: result.head.branch ?? result.head.oid, path });
    const done = performance.now();
    return {
      ms: done - started,
      cloneMs: cloned - started,
      readMs: done - cloned,
      size: content.bytes.length,
      repoId: result.repoId,
      ref: result.head.branch ?? result.head.oid,
    };
  },

  async bloblessBlame(repoId, ref, path) {
    const started = performance.now();
    const result = await blobless.repo(repoId).blame({ ref, path });
    return {
      ms: performance.now() - started,
      lines: result.lines.length,
      requests: result.requests,
      versionsFetched: result.versionsFetched,
    };
  },

  async bloblessHistoryClone(url) {
    const started = performance.now();
    const result = await blobless.clone({ url });
    const cloned = performance.now();
    const graph = await blobless.repo(result.repoId).commitGraphStatus();
    return {
      cloneMs: cloned - started,
      graphWaitMs: performance.now() - cloned,
      repoId: result.repoId,
      ref: result.head.branch ?? result.head.oid,
      graph,
    };
  },

  async bloblessOpenFolder(repoId, ref, path) {
    const started = performance.now();
    await blobless.repo(repoId).readTree({ ref, path });
    return { ms: performance.now() - started };
  },

  async bloblessFileHistory(repoId, ref, path, limit) {
    const started = performance.now();
    const page = await blobless.repo(repoId).fileHistory({ ref, path, skip: 0, limit });
    return { ms: performance.now() - started, entries: page.entries.length, more: page.more };
  },

  async bloblessLastCommits(repoId, ref, path) {
    const started = performance.now();
    const result = await blobless.repo(repoId).lastCommits({ ref, path });
    return {
      ms: performance.now() - started,
      entries: Object.keys(result.entries).length,
      unresolved: result.unresolved.length,
    };
  },

  async embedOneFile(url, path) {
    // The widget's own worker, created as src/embed/embedClient.ts creates it, started before the clock.
    embed ??= wrapEngine(
      new Worker(new URL('../../workers/embed.worker.ts', import.meta.url), {
        type: 'module',
        name: 'embed',
      }),
    );
    // Started before the clock: a call the worker refuses still waits for its engine (its storage probe).
    await embed.listRepos().catch(() => undefined);
    const started = performance.now();
    const read = await embed.readFileMinimal({ url, path });
    return { ms: performance.now() - started, size: read.file?.bytes.length ?? 0, commit: read.commit };
  },

  async isogitClone(url, capMs) {
    if (!isogit) {
      const worker = new Worker(new URL('./isogit.worker.ts', import.meta.url), {
        type: 'module',
        name: 'isogit',
      });
      isogit = { worker, api: Comlink.wrap<IsogitWorkerApi>(worker) };
    }
    const { worker, api } = isogit;
    // Loaded before the clock starts, as the Blobless worker is by ready().
    await api.ping();
    const started = performance.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const capped = new Promise<'cap'>((resolve) => {
      timer = setTimeout(() => resolve('cap'), capMs);
    });
    // A worker that dies (out of memory) never answers its call; its error event says so.
    const crashed = new Promise<never>((_, reject) => {
      worker.onerror = (e) =>
        reject(new Error(`the isomorphic-git worker died: ${e.message || 'no message'}`));
    });
    try {
      const outcome = await Promise.race([api.clone(url), capped, crashed]);
      if (outcome === 'cap') {
        // isomorphic-git's clone takes no AbortSignal: stopping the worker is the only way to stop it.
        worker.terminate();
        isogit = undefined;
        return { ms: performance.now() - started, finished: false };
      }
      return { ms: outcome.ms, finished: true };
    } catch (err) {
      worker.terminate();
      isogit = undefined;
      return {
        ms: performance.now() - started,
        finished: false,
        error: String((err as Error).message ?? err),
      };
    } finally {
      clearTimeout(timer);
    }
  },
};

window.bench = bench;
