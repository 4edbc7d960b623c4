import { describe, expect, inject, it } from 'vitest';
import { api } from '../workers/api.ts';
import { forgetCredentials } from '../workers/store/credentials.ts';

const url = `${inject('gitServerUrl')}/private.git`;
const auth = { username: 'alice', password: 'secret' };

describe('credentials of a private repo', () => {
  it('serve the lazy fetches of the session without being stored', async () => {
    const { repoId } = await api.clone({ url, auth });
    expect((await api.listRepos()).find((r) => r.id === repoId)?.auth).toBeUndefined();
    const checkout = await api.checkout(repoId, 'HEAD');
    expect(checkout.blobsFetched).toBeGreaterThan(0);

    // A new session (the worker restarted) has no credentials: fetching a missing blob says why.
    forgetCredentials(repoId);
    const older = (await api.log(repoId, 'HEAD', { limit: 10 })).commits.at(-1)!.oid;
    const diff = await api.diffCommits(repoId, older, 'HEAD');
    const changed = diff.files.find((f) => f.oldOid)!;
    const err = await api.diffFile(repoId, changed.oldOid ?? null, changed.newOid ?? null).catch((e) => e);
    expect(err.code).toBe('MISSING_OBJECT');
    expect(err.message).toMatch(/401|credentials/);
  });

  it('are kept in the repo record when asked, and used after a restart', async () => {
    const { repoId } = await api.clone({ url, auth, rememberCredentials: true });
    expect((await api.listRepos()).find((r) => r.id === repoId)?.auth).toEqual(auth);
    forgetCredentials(repoId);
    const checkout = await api.checkout(repoId, 'HEAD');
    expect(checkout.blobsFetched).toBeGreaterThan(0);
  });
});
