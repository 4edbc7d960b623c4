import { hasCredentials } from '../../store/credentials.ts';
import { getRepo } from '../../store/registry.ts';
import { TransportError } from '../../transport/errors.ts';
import { AuthRequiredError } from './errors.ts';

/**
 * Runs an operation on a stored repo; a 401 anywhere in it (the lazy blob fetch of a file view, a checkout's
 * batch, a fetch) becomes AuthRequiredError, so the UI knows to ask for a token and run it again, instead of
 * showing a failed file.
 */
export async function withAuthRequired<T>(repoId: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (err) {
    if (!isUnauthorized(err)) throw err;
    const record = await getRepo(repoId);
    if (!record) throw err;
    throw new AuthRequiredError(repoId, new URL(record.url).host, hasCredentials(record));
  }
}

function isUnauthorized(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof TransportError && e.code === 'HTTP_UNAUTHORIZED') return true;
  }
  return false;
}
