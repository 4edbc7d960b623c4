import { expect, type Page, test } from '@playwright/test';
import { startCraftedServer, tinyRepoPack } from '../test/support/craftedServer.ts';
import { amplifyingDelta, buildPack } from '../workers/pack/testing/packBuilder.ts';

const MiB = 1024 * 1024;
const { pack, commit } = tinyRepoPack();
const head = (target: string) => [
  { name: 'HEAD', oid: commit, symrefTarget: target },
  { name: 'refs/heads/main', oid: commit },
];

let server: Awaited<ReturnType<typeof startCraftedServer>>;

test.beforeAll(async () => {
  server = await startCraftedServer({
    'head-traversal.git': { refs: head('refs/heads/../../config'), pack },
    'delta-bomb.git': {
      refs: head('refs/heads/main'),
      pack: buildPack([
        { type: 'blob', data: new Uint8Array(16 * MiB) },
        { ofsDelta: 0, delta: amplifyingDelta(16 * MiB, 1024 * MiB) },
      ]),
    },
  });
});

test.afterAll(async () => {
  await server.close();
});

async function storedRepoDatabases(page: Page): Promise<string[]> {
  return page.evaluate(async () =>
    (await indexedDB.databases()).map((d) => d.name ?? '').filter((n) => n.startsWith('blobless-repo-')),
  );
}

/** A deep link to a hostile repository: the clone fails with its message and stores nothing. */
async function expectRefused(page: Page, repo: string, message: RegExp): Promise<void> {
  await page.goto(`/?repo=${encodeURIComponent(`${server.url}/${repo}`)}`);
  const error = page.getByTestId('clone-error');
  await expect(error).toBeVisible({ timeout: 60_000 });
  await expect(error).toContainText(message);
  expect(await storedRepoDatabases(page)).toEqual([]);
}

test('a deep link to a server whose HEAD names refs/heads/../../config ends in a clear error', async ({
  page,
}) => {
  await expectRefused(page, 'head-traversal.git', /not a valid ref name/);
});

test('a deep link to a delta bomb ends in the object size limit, with nothing stored', async ({ page }) => {
  await expectRefused(page, 'delta-bomb.git', /maxObjectSize/);
});
