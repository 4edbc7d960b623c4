import { type AuthRequiredError, type BloblessError, gitClient } from '../gitClient.ts';
import { askForToken } from './TokenDialog.tsx';

/**
 * Runs a worker operation on a stored repo; when the server asks for credentials (AUTH_REQUIRED: none
 * after a reload, or the token was refused), asks the person for a token, hands it to the worker and runs
 * the operation again. Cancelling the dialog rethrows the original error.
 */
export async function withToken<T>(operation: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await operation();
    } catch (err) {
      // AuthRequiredError: which repo, at which host, and whether a token was refused.
      if (!isAuthRequired(err)) throw err;
      const answer = await askForToken({ host: err.host, rejected: err.rejected, proxy: err.proxy });
      if (!answer) throw err;
      await gitClient.repo(err.repoId).setCredentials({ auth: answer.auth, remember: answer.remember });
    }
  }
}

/** The worker's AuthRequiredError (AUTH_REQUIRED is its code alone), told by its code: no class is loaded for it. */
function isAuthRequired(err: unknown): err is AuthRequiredError {
  return (err as BloblessError | undefined)?.code === 'AUTH_REQUIRED';
}
