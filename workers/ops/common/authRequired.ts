import { TransportError } from '../../transport/errors.ts';
import type { OpsContext } from './engineContext.ts';
import { AuthRequiredError } from './errors.ts';

/**
 * Runs an operation on a stored repo; a 401 anywhere in it (the lazy blob fetch of a file view, a checkout's
 * batch, a fetch) becomes AuthRequiredError, so the UI knows to ask for a token and run it again, instead of
 * showing a failed file.
 */
export async function withAuthRequired<T>(
  ctx: OpsContext,
  repoId: string,
  operation: () => Promise<T>,
): Promise<T> {
  try {
    return await operation();
  } catch (err) {
    if (!isUnauthorized(err)) throw err;
    const record = await ctx.store.registry.get(repoId);
    if (!record) throw err;
    // A token the person has not agreed to send through the repository's proxy was never sent: ask for it
    // again, with the proxy named, as for a missing one.
    const rejected = ctx.store.credentials.has(record) && !isCode(err, 'PROXY_CONSENT_REQUIRED');
    throw new AuthRequiredError(repoId, new URL(record.url).host, rejected, record.corsProxy);
  }
}

function isUnauthorized(err: unknown): boolean {
  return isCode(err, 'HTTP_UNAUTHORIZED') || isCode(err, 'PROXY_CONSENT_REQUIRED');
}

function isCode(err: unknown, code: TransportError['code']): boolean {
  for (let e = err, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof TransportError && e.code === code) return true;
  }
  return false;
}
