/** What every long operation takes: progress reports and a way to cancel. */
export interface OperationHooks<P> {
  onProgress?: (p: P) => void;
  signal?: AbortSignal;
}
