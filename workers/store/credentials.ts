import { TransportError } from '../transport/errors.ts';
import type { HttpAuth } from '../transport/gitHttp.ts';
import { getRepo, type RepoRecord, updateRepo } from './registry.ts';

// Credentials given for a clone are needed again by every lazy blob fetch. They live in the worker's
// memory for the session; they reach IndexedDB (the repo's record) only when the person asked for that.
const session = new Map<string, HttpAuth>();

export function rememberForSession(repoId: string, auth: HttpAuth): void {
  session.set(repoId, auth);
}

export function forgetCredentials(repoId: string): void {
  session.delete(repoId);
}

export function credentialsFor(record: RepoRecord): HttpAuth | undefined {
  return session.get(record.id) ?? record.auth;
}

/**
 * Credentials given again for a stored repo (after a reload, or when the old ones were refused): kept for
 * the session, and in the repo's record only when `remember` is true; otherwise a stored pair is removed,
 * so the person's latest choice is what stays. A repository reached through a CORS proxy takes a token
 * only with the person's agreement to that proxy (`auth.proxy`, its address as the dialog showed it),
 * which its record then names (`tokenProxy`).
 */
export async function setCredentials(repoId: string, auth: HttpAuth, remember: boolean): Promise<void> {
  const record = await getRepo(repoId);
  const proxy = record?.corsProxy?.replace(/\/+$/, '');
  if (proxy && auth.proxy?.replace(/\/+$/, '') !== proxy)
    throw new TransportError(
      'PROXY_CONSENT_REQUIRED',
      `This repository is reached through the CORS proxy at ${proxy}; a token is sent through it only once you agree to that.`,
    );
  session.set(repoId, auth);
  await updateRepo(repoId, (r) => {
    const { auth: _old, tokenProxy: _before, ...rest } = r;
    return {
      ...rest,
      ...(remember ? { auth } : {}),
      ...(proxy ? { tokenProxy: proxy } : {}),
      needsToken: true,
    };
  });
}

/** Whether credentials are at hand for the repo (session or stored). */
export function hasCredentials(record: RepoRecord): boolean {
  return credentialsFor(record) !== undefined;
}

/** A repo's record as the page sees it: whether a token is kept, never the token. */
export type RepoSummary = Omit<RepoRecord, 'auth'> & {
  /** A token is kept in this browser's storage for the repo (the person asked for that). */
  hasRememberedToken: boolean;
  needsToken: boolean;
};

export function repoSummary(record: RepoRecord): RepoSummary {
  const { auth, ...rest } = record;
  // A record from before `needsToken` was kept still says so by its stored token.
  return {
    ...rest,
    hasRememberedToken: auth !== undefined,
    needsToken: !!record.needsToken || auth !== undefined,
  };
}
