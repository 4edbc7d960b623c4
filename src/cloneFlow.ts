import type { CheckoutProgress, CloneOptions, CloneProgress, CloneResult } from '../workers/engine/index.ts';
import { loadAppConfig } from './appConfig.ts';
import { whileBusy } from './busy.ts';
import { type BloblessError, gitClient } from './gitClient.ts';
import { expandRepoUrl } from './repoUrl.ts';
import { askPersistenceOnce } from './storage.ts';

// What a server says about an address that names no repository (a `.git`-less one, say).
const NOT_A_REPO = new Set(['HTTP_NOT_FOUND', 'HTTP_ERROR', 'NOT_A_REPOSITORY']);

export type FlowProgress = CloneProgress | CheckoutProgress;

/**
 * What "clone" means to a person. By default, open first, fill in behind: the branch's commit and trees
 * arrive (depth 1, no blobs), the repository opens, and the repo view fetches the rest of the history in
 * the background (historyFill.ts); the working tree is checked out when first needed (editing). A clone
 * the person shaped (a depth, every file) is what they asked for: the history arrives, then the checkout.
 */
export async function cloneAndCheckout(
  options: CloneOptions,
  onProgress: (p: FlowProgress) => void,
  signal: AbortSignal,
): Promise<CloneResult> {
  const firstView = !options.depth && !options.singleBranch && options.filter !== null;
  const result = await whileBusy('clone', async () => {
    const { corsProxy } = await loadAppConfig();
    const url = expandRepoUrl(options.url);
    const run = (u: string) =>
      gitClient.clone(
        { fallbackCorsProxy: corsProxy, ...options, url: u, firstView },
        { onProgress, signal },
      );
    let cloned: CloneResult;
    try {
      cloned = await run(url);
    } catch (err) {
      // `https://host/owner/repo` where only `repo.git` is served (git http-backend, some hosts): as git
      // does for a local path, try the name with `.git` before giving up.
      const code = (err as BloblessError).code;
      if (/\.git\/?$/.test(url) || signal.aborted || !NOT_A_REPO.has(code)) throw err;
      cloned = await run(`${url.replace(/\/+$/, '')}.git`).catch(() => Promise.reject(err));
    }
    const repo = gitClient.repo(cloned.repoId);
    // Browsing needs no working tree: the first edit (or the working-tree view) checks it out.
    if (cloned.historyFillPending) {
      // Cancel pressed as the clone was finishing (its last writes do not look at the signal): as before,
      // when the checkout that came next saw it, none of the clone stays.
      if (signal.aborted) {
        await repo.delete().catch(() => undefined);
        // As the engine says it (the page does not load the error classes for it).
        throw Object.assign(new Error('The clone was cancelled; nothing of it was kept.'), {
          code: 'ABORTED',
        });
      }
      return cloned;
    }
    try {
      await repo.checkout({ ref: 'HEAD' }, { onProgress, signal });
    } catch (err) {
      // A person who pressed Cancel wants none of the clone, not a repo with an empty working tree.
      if (signal.aborted) await repo.delete().catch(() => undefined);
      throw err;
    }
    return cloned;
  });
  // Not awaited: the answer (or Firefox's prompt) must not hold up showing the repository.
  void askPersistenceOnce();
  return result;
}

export const NEXT_STEP: Record<string, string> = {
  OFFLINE: 'Connect to the network, then try again. Repositories already stored open without it.',
  INVALID_URL:
    'Paste the https:// address you would give to git clone (github.com/owner/repo and owner/repo work too).',
  NETWORK_ERROR: 'Check your connection, then try again.',
  HOST_UNREACHABLE: 'Check the address for a typo, and that the server is up.',
  CORS_REFUSED:
    'Clone it through a CORS proxy: give one under "CORS proxy and private repositories" (`npm run serve:proxy` runs one), or ask the host to send CORS headers.',
  HTTP_UNAUTHORIZED: 'Fill in a user name and token under "CORS proxy and private repositories".',
  HTTP_FORBIDDEN:
    'Use a token with read access to this repository, or check the CORS proxy allows this host.',
  INSECURE_TRANSPORT: 'Use the https:// address of the repository and of the CORS proxy.',
  REDIRECT_REFUSED: 'Clone the address the repository moved to.',
  PROXY_REFUSED: "Check the CORS proxy's settings, or clone without it.",
  PROXY_CONSENT_REQUIRED: 'Agree to send the token through the CORS proxy, or clone without the proxy.',
  EMPTY_REPOSITORY: 'Push a first commit to it, then clone again.',
  REF_NOT_FOUND: 'Leave the branch empty to clone the default branch.',
  STORAGE_FULL: 'Delete repositories you no longer need.',
  NOT_GIT: 'Use the address git clone takes, not the address of a web page about the repository.',
  MISSING_OBJECT: 'Connect to the network and try again: this file was never downloaded.',
  HOSTILE_TREE:
    'Its owners should know: git itself refuses this tree. Other branches and commits may still open.',
};
