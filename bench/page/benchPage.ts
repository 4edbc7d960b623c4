/**
 * What the bench page exposes on `window.bench` for the Node driver (`page.evaluate`). Types only, so the
 * driver can import them without pulling page code into Node.
 */

/** Worker operations that arrived late or are still coming; each is measured only if the running worker has it. */
export type UpcomingOperation = 'checkout' | 'readFile' | 'fetch';

export interface PageReady {
  available: Record<UpcomingOperation, boolean>;
  /** The calls the page made through the worker boundary at start-up, by name, in order. */
  startupCalls: string[];
  /** The app's start-up calls (src/startup.ts STARTUP_CALLS): the driver refuses a page whose calls differ. */
  expectedStartupCalls: string[];
}

export interface BloblessCloneTiming {
  ms: number;
  repoId: string;
  /** What a checkout of the result checks out: the cloned branch, or the commit when HEAD is detached. */
  ref: string;
}

export interface Timing {
  ms: number;
}

export interface OpenOneFileTiming {
  /** From nothing to the file's bytes: clone without blobs, then readFile. */
  ms: number;
  cloneMs: number;
  readMs: number;
  size: number;
  repoId: string;
  ref: string;
}

export interface BlameTiming {
  ms: number;
  lines: number;
  /** Blob requests blame itself made. */
  requests: number;
  /** Old versions' blobs it fetched in them. */
  versionsFetched: number;
}

export interface HistoryCloneTiming {
  /** clone({ url }): every commit and tree, no blob. */
  cloneMs: number;
  /** From the clone's end until the commit-graph writes it scheduled were done. */
  graphWaitMs: number;
  repoId: string;
  ref: string;
  graph: { commits: number; layers: number; bytes: number };
}

export interface FileHistoryTiming {
  ms: number;
  entries: number;
  more: boolean;
}

export interface LastCommitsTiming {
  ms: number;
  entries: number;
  unresolved: number;
}

export interface EmbedOneFileTiming {
  /** From nothing to the file's bytes through the widget's worker: readFileMinimal (no clone). */
  ms: number;
  size: number;
  commit: string;
}

export interface FirstViewTiming {
  /** From the clone's start to the README's bytes: the depth-1 clone of the default branch, then its README. */
  ms: number;
  cloneMs: number;
  readMs: number;
  /** The README read, or null when the tip has none (then the first view is the tree alone). */
  path: string | null;
}

/** When the page and its worker started, in the page's clock (ms since navigation). For `--profile`. */
export interface StartupTimes {
  /** The bench module began to run: the page's HTML and script were loaded and parsed. */
  moduleStartMs: number;
  /** `new Worker` returned. */
  workerCreatedMs: number;
  /**
   * The app's start-up calls (src/startup.ts) were sent, and when the ones its home view waits for had
   * answered (the stored repositories listed, the storage checked): from then on a person can paste a URL.
   */
  firstCallSentMs: number;
  firstCallAnsweredMs: number;
  /** The ingester's warm-up (cloneFieldFocused), from its call to its end, done or stopped; null if not asked. */
  warmUpMs: number | null;
  warmUpOutcome: 'done' | 'stopped' | null;
  /** The page's `performance.timeOrigin`, to place the worker's own clock beside the page's. */
  timeOrigin: number;
}

export interface IsogitTiming {
  ms: number;
  /** False when the time cap stopped it (the worker was terminated) or it failed. */
  finished: boolean;
  error?: string;
}

export interface BenchPage {
  ready(): Promise<PageReady>;
  startupTimes(): Promise<StartupTimes>;
  /**
   * The person puts the URL in the clone form: the app warms the ingester up then (src/warmUpForClone.ts).
   * Resolves when the warm-up is done, as after the seconds a person takes to paste and press Enter.
   */
  cloneFieldFocused(): Promise<{ ms: number; outcome: 'done' | 'stopped' }>;
  bloblessFirstView(url: string): Promise<FirstViewTiming>;
  bloblessClone(url: string): Promise<BloblessCloneTiming>;
  bloblessCheckout(repoId: string, ref: string): Promise<Timing>;
  bloblessNoopFetch(repoId: string): Promise<Timing>;
  bloblessOpenOneFile(url: string, path: string): Promise<OpenOneFileTiming>;
  bloblessBlame(repoId: string, ref: string, path: string): Promise<BlameTiming>;
  /** A clone with its whole history, then a wait for the commit-graph the worker writes after it. */
  bloblessHistoryClone(url: string): Promise<HistoryCloneTiming>;
  /** The folder view a person comes from (readTree), untimed, before one of the history cells. */
  bloblessOpenFolder(repoId: string, ref: string, path: string): Promise<Timing>;
  bloblessFileHistory(repoId: string, ref: string, path: string, limit: number): Promise<FileHistoryTiming>;
  bloblessLastCommits(repoId: string, ref: string, path: string): Promise<LastCommitsTiming>;
  embedOneFile(url: string, path: string): Promise<EmbedOneFileTiming>;
  isogitClone(url: string, capMs: number): Promise<IsogitTiming>;
  /**
   * The longest task the page's main thread ran since the last call (PerformanceObserver `longtask`: tasks
   * over 50 ms), or 0 when none was that long; and how many there were.
   */
  mainThreadLongTasks(): { longestMs: number; count: number };
}

declare global {
  interface Window {
    bench: BenchPage;
  }
}
