import { gitClient, type RemoteOperationError } from '../gitClient.ts';
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
      const e = err as RemoteOperationError;
      if (e?.code !== 'AUTH_REQUIRED') throw err;
      const details = (e.details ?? {}) as {
        repoId?: string;
        host?: string;
        rejected?: boolean;
        proxy?: string;
      };
      if (!details.repoId) throw err;
      const answer = await askForToken({
        host: details.host ?? 'the server',
        rejected: !!details.rejected,
        proxy: details.proxy,
      });
      if (!answer) throw err;
      await gitClient.setCredentials(details.repoId, answer.auth, answer.remember);
    }
  }
}
