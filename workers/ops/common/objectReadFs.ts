// The file system handed to isomorphic-git for reading objects. isomorphic-git wraps the fs it is given
// anew on every call, and to learn whether it is promise-based it calls `readFile()` with no path, twice
// (bindFs, isPromiseFs); lightning-fs answers by throwing from its path normalisation, an Error and its
// stack trace each time. In a history walk that reads thousands of trees this was 10 to 19 % of the time
// (CPU profiles of bench/reading/historyOps.bench.ts on large: blame, file history, last commits). The
// wrapper answers a call without a path at once and passes every other call to lightning-fs unchanged.

import type FS from '@isomorphic-git/lightning-fs';
import type { PromiseFsClient } from 'isomorphic-git';

/** What isomorphic-git's FileSystem binds (its `commands`, with rm and cp looked for apart). */
const COMMANDS = [
  'readFile',
  'writeFile',
  'mkdir',
  'rmdir',
  'unlink',
  'stat',
  'lstat',
  'readdir',
  'readlink',
  'symlink',
] as const;

// A frozen object, not an Error: what makes lightning-fs's answer slow is the stack trace an Error takes,
// and isomorphic-git only looks at whether the call returned a promise.
const NO_PATH = Object.freeze({ code: 'EINVAL', message: 'readFile needs a path' });

/**
 * `fs` as isomorphic-git is best given it for reads. Made once per repo handle (RepoHandle.objectFs), so
 * the wrapper is not made again for every object read.
 */
export function objectReadFs(fs: FS): PromiseFsClient {
  const target = fs.promises as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const promises: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const command of COMMANDS) promises[command] = target[command].bind(target);
  const readFile = promises.readFile;
  promises.readFile = (...args) => (args.length ? readFile(...args) : Promise.reject(NO_PATH));
  return { promises: promises as unknown as PromiseFsClient['promises'] };
}
