// The depth options of clone and fetch, refused as git refuses them, before a request is made: a library's
// caller who passes `depth: 0` meant something, and a history silently left whole (or a clone silently made
// without its first view) would hide the mistake.

import { OperationError } from '../common/errors.ts';

/**
 * Throws INVALID_INPUT unless `depth` is absent or a whole number of commits, 1 or more: git clone and git
 * fetch die on `--depth=0`, `--depth=-1` ("depth 0 is not a positive number") and `--depth=1.5` ("invalid
 * depth option").
 */
export function checkDepth(depth: number | undefined): void {
  if (depth === undefined || (Number.isSafeInteger(depth) && depth > 0)) return;
  throw new OperationError(
    'INVALID_INPUT',
    `depth ${depth} is not a positive whole number: it counts the commits to fetch from each tip (1 or more); leave it out for the whole history.`,
  );
}

/**
 * Throws INVALID_INPUT unless `deepen` is absent or a whole number, 0 or more. git fetch takes `--deepen=0`
 * as no deepening and dies on `--deepen=-1` ("negative depth in --deepen is not supported") and on
 * `--deepen=1.5` (not a number).
 */
export function checkDeepen(deepen: number | undefined): void {
  if (deepen === undefined || (Number.isSafeInteger(deepen) && deepen >= 0)) return;
  throw new OperationError(
    'INVALID_INPUT',
    `deepen ${deepen} is not a whole number of commits, 0 or more: it counts the commits to add below the shallow boundary.`,
  );
}

/**
 * Throws INVALID_INPUT for a fetch's depth options as git fetch refuses them: each one checked as above,
 * and no two of `depth`, `deepen` (but 0, which is none) and `unshallow` together ("options '--deepen' and
 * '--depth' cannot be used together", and alike for `--unshallow`), since each sets the depth its own way.
 */
export function checkFetchDepth(opts: { depth?: number; deepen?: number; unshallow?: boolean }): void {
  checkDepth(opts.depth);
  checkDeepen(opts.deepen);
  const given = [
    opts.depth !== undefined ? 'depth' : null,
    opts.deepen ? 'deepen' : null,
    opts.unshallow ? 'unshallow' : null,
  ].filter((o) => o !== null);
  if (given.length < 2) return;
  throw new OperationError(
    'INVALID_INPUT',
    `${given.join(' and ')} cannot be used together: each sets how deep the history goes; give one.`,
  );
}
