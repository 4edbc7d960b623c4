import type { HttpAuth } from '../transport/gitHttp.ts';
import type { RepoRecord } from './registry.ts';

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
