// blobless: a git engine for the browser (and Node): partial clone over smart-HTTP protocol v2, objects in a
// real git directory, blobs fetched when something needs them. See docs/LIBRARY.md.
//
//   const engine = createEngine();                        // IndexedDB, namespace 'blobless'
//   const { repoId } = await engine.clone({ url });
//   const file = await engine.repo(repoId).readFile({ ref: 'HEAD', path: 'README.md' });
//
// In a page, run it in a worker: `exposeEngine(createEngine())` there (blobless/worker), `wrapEngine(worker)`
// here (blobless/client).

export { createEngine } from './engine.ts';
export * from './errors.ts';
export type * from './types.ts';
