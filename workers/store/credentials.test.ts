import { describe, expect, it } from 'vitest';
import { memoryStorage } from '../storage/memory.ts';
import { Credentials, repoSummary } from './credentials.ts';
import { Registry, type RepoRecord } from './registry.ts';
import { StorageNames } from './storage.ts';
import { repoRecord } from './testing/repoRecord.ts';

const record = (over: Partial<RepoRecord> = {}) => repoRecord('r', over);

async function setup(over: Partial<RepoRecord> = {}) {
  const registry = new Registry(memoryStorage(), new StorageNames('credtest'));
  await registry.put(record(over));
  return { registry, credentials: new Credentials(registry) };
}

const alice = { username: 'alice', password: 'token-1' };

describe('Credentials', () => {
  it('session credentials come before stored ones, and go with forget and clear', async () => {
    const { credentials } = await setup();
    const stored = record({ auth: { username: 'bob', password: 'old' } });
    expect(credentials.for(stored)).toEqual({ username: 'bob', password: 'old' });
    expect(credentials.has(record())).toBe(false);
    credentials.rememberForSession('r', alice);
    expect(credentials.for(stored)).toBe(alice);
    expect(credentials.has(record())).toBe(true);
    expect(credentials.for(record({ id: 'other' }))).toBeUndefined();
    credentials.forget('r');
    expect(credentials.for(stored)).toEqual({ username: 'bob', password: 'old' });
    credentials.rememberForSession('r', alice);
    credentials.clear();
    expect(credentials.has(record())).toBe(false);
  });

  it('set keeps them for the session, and in the record only when asked', async () => {
    const { registry, credentials } = await setup({ auth: { username: 'bob', password: 'old' } });
    await credentials.set('r', alice, false);
    expect(credentials.for(record())).toBe(alice);
    const forgotten = await registry.get('r');
    expect(forgotten?.auth).toBeUndefined();
    expect(forgotten?.needsToken).toBe(true);
    await credentials.set('r', alice, true);
    expect((await registry.get('r'))?.auth).toEqual(alice);
    expect((await registry.get('r'))?.tokenProxy).toBeUndefined();
  });

  it('through a CORS proxy, takes a token only with consent to that proxy, which the record then names', async () => {
    const { registry, credentials } = await setup({
      corsProxy: 'https://proxy.example//',
      tokenProxy: 'https://old',
    });
    await expect(credentials.set('r', alice, true)).rejects.toMatchObject({
      name: 'TransportError',
      code: 'PROXY_CONSENT_REQUIRED',
      message:
        'This repository is reached through the CORS proxy at https://proxy.example; a token is sent through it only once you agree to that.',
    });
    await expect(
      credentials.set('r', { ...alice, proxy: 'https://other.example' }, true),
    ).rejects.toMatchObject({
      code: 'PROXY_CONSENT_REQUIRED',
    });
    expect(credentials.has(record())).toBe(false);
    expect((await registry.get('r'))?.auth).toBeUndefined();
    // The same address, trailing slashes aside.
    const agreed = { ...alice, proxy: 'https://proxy.example//' };
    await credentials.set('r', agreed, true);
    expect(await registry.get('r')).toMatchObject({
      auth: agreed,
      tokenProxy: 'https://proxy.example',
      needsToken: true,
    });
  });

  it('without a proxy a token needs no consent, and an old tokenProxy is dropped', async () => {
    const { registry, credentials } = await setup({ tokenProxy: 'https://old' });
    await credentials.set('r', alice, false);
    const r = await registry.get('r');
    expect(r?.tokenProxy).toBeUndefined();
    expect(r?.needsToken).toBe(true);
  });
  it('a proxy the person agreed to needs no CORS proxy on the record; a repo without a record takes a token', async () => {
    const { registry, credentials } = await setup();
    const withProxy = { ...alice, proxy: 'https://proxy.example' };
    await credentials.set('r', withProxy, true);
    expect(await registry.get('r')).toMatchObject({ auth: withProxy, needsToken: true });
    expect((await registry.get('r'))?.tokenProxy).toBeUndefined();
    // Not stored (deleted meanwhile): kept for the session, and no record is made for it.
    await credentials.set('gone', alice, true);
    expect(credentials.for(record({ id: 'gone' }))).toBe(alice);
    expect(await registry.get('gone')).toBeUndefined();
  });
});

describe('repoSummary', () => {
  it('says whether a token is kept, never the token', () => {
    const withToken = repoSummary(record({ auth: alice }));
    expect('auth' in withToken).toBe(false);
    expect(withToken).toMatchObject({ hasRememberedToken: true, needsToken: true, id: 'r' });
    expect(repoSummary(record())).toMatchObject({ hasRememberedToken: false, needsToken: false });
    expect(repoSummary(record({ needsToken: true }))).toMatchObject({
      hasRememberedToken: false,
      needsToken: true,
    });
  });
});
