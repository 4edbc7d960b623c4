// @ts-check
// One folder of a repository, and nothing else: what WordPress Playground's git-sparse-checkout.ts does by
// hand with isomorphic-git's internals (ls-refs, a fetch of the trees without blobs at depth 1, then one
// fetch of the folder's blobs), here with the engine's public API. Runs wherever the engine does.

/**
 * The files under `folder` at `ref` (the remote's HEAD when absent), by path. Fetches the tip commit and
 * its trees (no blobs), then the folder's blobs in one request.
 *
 * @param {import('blobless').Engine} engine
 * @param {{ url: string; folder: string; ref?: string; signal?: AbortSignal }} args
 * @returns {Promise<{ files: Map<string, Uint8Array>; requests: number; bytes: number }>}
 */
export async function sparseCheckout(engine, { url, folder, ref, signal }) {
  const { repoId } = await engine.clone({ url, ref, depth: 1, singleBranch: true }, { signal });
  const repo = engine.repo(repoId);
  try {
    const done = await repo.checkout({ ref: 'HEAD', paths: [folder] }, { signal });
    const files = new Map();
    const { paths } = await repo.listPaths({ ref: 'HEAD' });
    for (const path of paths.split('\n')) {
      if (path.startsWith(`${folder}/`)) files.set(path, await repo.readWorktreeFile({ path }));
    }
    return { files, requests: done.requests, bytes: done.bytes };
  } finally {
    // The folder is what was asked for; the clone behind it is not kept.
    await repo.delete();
  }
}
