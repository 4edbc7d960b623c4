import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** This package's folder, and the repository's: the package is built from the repository's workers/. */
export const packageDir = import.meta.dirname;
export const repoRoot = resolve(packageDir, '../..');

/** The folder the sources are compiled from; dist/ mirrors it, so `workers/x/y.ts` ships as `dist/x/y.js`. */
export const sourceRoot = join(repoRoot, 'workers');
export const distDir = join(packageDir, 'dist');

export interface EntryPoint {
  /** What a user imports: `blobless`, `blobless/worker`, … */
  specifier: string;
  /** The subpath of the `exports` map: `.`, `./worker`, … */
  subpath: string;
  /** The source file, from the repository root: `workers/engine/index.ts`. */
  source: string;
  /** The built files, from the package folder: `./dist/engine/index.js` and its `.d.ts`. */
  js: string;
  types: string;
}

interface Manifest {
  name: string;
  version: string;
  exports: Record<string, string | { types: string; default: string }>;
  dependencies: Record<string, string>;
  sideEffects: boolean | string[];
}

export function readManifest(): Manifest {
  return JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as Manifest;
}

/**
 * The public entry points, read from package.json's `exports`: the one list of them, which the build, the
 * API documentation and the tests all follow. `./package.json` is not an entry point.
 */
export function entryPoints(manifest: Manifest = readManifest()): EntryPoint[] {
  return Object.entries(manifest.exports).flatMap(([subpath, target]) => {
    if (typeof target === 'string') return [];
    const built = /^\.\/dist\/(.+)\.js$/.exec(target.default);
    if (!built || target.types !== `./dist/${built[1]}.d.ts`) {
      throw new Error(
        `package.json exports["${subpath}"] should name ./dist/<path>.js and ./dist/<path>.d.ts, the build of workers/<path>.ts`,
      );
    }
    return [
      {
        specifier: subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`,
        subpath,
        source: `workers/${built[1]}.ts`,
        js: target.default,
        types: target.types,
      },
    ];
  });
}
