/**
 * What the bench page exposes on `window.bench` for the Node driver (`page.evaluate`). Types only, so the
 * driver can import them without pulling page code into Node.
 */

/** Worker operations that arrived late or are still coming; each is measured only if the running worker has it. */
export type UpcomingOperation = 'checkout' | 'readFile' | 'fetch';

export interface PageReady {
  available: Record<UpcomingOperation, boolean>;
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
}

export interface EmbedOneFileTiming {
  /** From nothing to the file's bytes through the widget's worker: readFileMinimal (no clone). */
  ms: number;
  size: number;
  commit: string;
}

export interface IsogitTiming {
  ms: number;
  /** False when the time cap stopped it (the worker was terminated) or it failed. */
  finished: boolean;
  error?: string;
}

export interface BenchPage {
  ready(): Promise<PageReady>;
  bloblessClone(url: string): Promise<BloblessCloneTiming>;
  bloblessCheckout(repoId: string, ref: string): Promise<Timing>;
  bloblessNoopFetch(repoId: string): Promise<Timing>;
  bloblessOpenOneFile(url: string, path: string): Promise<OpenOneFileTiming>;
  bloblessBlame(repoId: string, ref: string, path: string): Promise<BlameTiming>;
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
