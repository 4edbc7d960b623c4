import { expect, inject, it } from 'vitest';
import { testEngine } from './support/engine.ts';

const serverUrl = inject('gitServerUrl');

/** Whether a repository database of this engine's namespace exists in (fake) IndexedDB. */
async function repoDatabaseExists(): Promise<boolean> {
  const dbs = await indexedDB.databases();
  return dbs.some((d) => d.name?.startsWith('blobless-repo-') && !d.name.endsWith('_lock'));
}

it("makes the new repository's database while its fetch waits for the pack, not after", async () => {
  let seenBeforePack: boolean | undefined;
  const { engine } = testEngine({
    fetch: async (input, init) => {
      const body = init?.body;
      if (body instanceof Uint8Array && new TextDecoder().decode(body).includes('command=fetch')) {
        // The pack is held back until the database exists, for at most 5 s: had the clone made it only
        // once the pack was in (as before), it would not exist by then.
        const until = Date.now() + 5_000;
        while (!(await repoDatabaseExists()) && Date.now() < until) {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        seenBeforePack = await repoDatabaseExists();
      }
      return fetch(input, init);
    },
  });
  const { repoId } = await engine.clone({ url: `${serverUrl}/basic.git` });
  expect(seenBeforePack).toBe(true);
  await engine.repo(repoId).delete();
});
