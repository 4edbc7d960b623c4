import { TransportError } from '../transport/errors.ts';
import type { HttpAuth } from '../transport/gitHttp.ts';
import type { Registry, RepoRecord } from './registry.ts';

/**
 * Credentials given for a clone are needed again by every lazy blob fetch. They live in the engine's
 * memory for the session; they reach storage (the repo's record) only when the person asked for that.
 */
export class Credentials {
  private readonly session = new Map<string, HttpAuth>();

  constructor(private readonly registry: Registry) {}

  rememberForSession(repoId: string, auth: HttpAuth): void {
    this.session.set(repoId, auth);
  }

  forget(repoId: string): void {
    this.session.delete(repoId);
  }

  for(record: RepoRecord): HttpAuth | undefined {
    return this.session.get(record.id) ?? record.auth;
  }

  /** Whether credentials are at hand for the repo (session or stored). */
  has(record: RepoRecord): boolean {
    return this.for(record) !== undefined;
  }

  /**
   * Credentials given again for a stored repo (after a reload, or when the old ones were refused): kept
   * for the session, and in the repo's record only when `remember` is true; otherwise a stored pair is
   * removed, so the person's latest choice is what stays. A repository reached through a CORS proxy takes
   * a token only with the person's agreement to that proxy (`auth.proxy`, its address as the dialog
   * showed it), which its record then names (`tokenProxy`).
   */
  async set(repoId: string, auth: HttpAuth, remember: boolean): Promise<void> {
    const record = await this.registry.get(repoId);
    const proxy = record?.corsProxy?.replace(/\/+$/, '');
    if (proxy && auth.proxy?.replace(/\/+$/, '') !== proxy)
      throw new TransportError(
        'PROXY_CONSENT_REQUIRED',
        `This repository is reached through the CORS proxy at ${proxy}; a token is sent through it only once you agree to that.`,
      );
    this.session.set(repoId, auth);
    await this.registry.update(repoId, (r) => {
      const { auth: _old, tokenProxy: _before, ...rest } = r;
      return {
        ...rest,
        ...(remember ? { auth } : {}),
        ...(proxy ? { tokenProxy: proxy } : {}),
        needsToken: true,
      };
    });
  }

  clear(): void {
    this.session.clear();
  }
}

/** A repo's record as the page sees it: whether a token is kept, never the token. */
export type RepoSummary = Omit<RepoRecord, 'auth'> & {
  /** A token is kept in this browser's storage for the repo (the person asked for that). */
  hasRememberedToken: boolean;
  /** The repository needed a token (RepoRecord.needsToken): its remote asks for one on the next fetch. */
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
