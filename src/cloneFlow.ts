import type { CheckoutProgress, CloneOptions, CloneProgress, CloneResult } from '../workers/engine/index.ts';
import { loadAppConfig } from './appConfig.ts';
import { whileBusy } from './busy.ts';
import { gitClient, OperationError } from './gitClient.ts';
import { askPersistenceOnce } from './storage.ts';

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
    const cloned = await gitClient.clone(
      { fallbackCorsProxy: corsProxy, ...options, firstView },
      { onProgress, signal },
    );
    const repo = gitClient.repo(cloned.repoId);
    // Browsing needs no working tree: the first edit (or the working-tree view) checks it out.
    if (cloned.historyFillPending) {
      // Cancel pressed as the clone was finishing (its last writes do not look at the signal): as before,
      // when the checkout that came next saw it, none of the clone stays.
      if (signal.aborted) {
        await repo.delete().catch(() => undefined);
        throw new OperationError('ABORTED', 'The clone was cancelled; nothing of it was kept.');
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
  INVALID_URL: 'Paste the https:// address you would give to git clone.',
  NETWORK_ERROR: 'Check the address, or set a CORS proxy if the host does not allow browser requests.',
  HTTP_UNAUTHORIZED: 'Fill in a user name and token under "CORS proxy and private repositories".',
  HTTP_FORBIDDEN:
    'Use a token with read access to this repository, or check the CORS proxy allows this host.',
  HTTP_NOT_FOUND: 'Check the address; a private repository needs a token.',
  INSECURE_TRANSPORT: 'Use the https:// address of the repository and of the CORS proxy.',
  REDIRECT_REFUSED: 'Clone the address the repository moved to.',
  PROXY_REFUSED: "Check the CORS proxy's settings, or clone without it.",
  PROXY_CONSENT_REQUIRED: 'Agree to send the token through the CORS proxy, or clone without the proxy.',
  EMPTY_REPOSITORY: 'Push a first commit to it, then clone again.',
  REF_NOT_FOUND: 'Leave the branch empty to clone the default branch.',
  STORAGE_FULL: 'Delete repositories you no longer need.',
  MISSING_OBJECT: 'Connect to the network and try again: this file was never downloaded.',
  HOSTILE_TREE:
    'Its owners should know: git itself refuses this tree. Other branches and commits may still open.',
};
