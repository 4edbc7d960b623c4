// Cancel of the UI's clone (src/cloneFlow.ts: clone, then checkout) in each phase, through a real comlink
// link as between the page and the git worker: the AbortSignal the Cancel button aborts crosses the boundary
// as it does in the app. The phases a relay can hold (negotiation, the pack arriving, the checkout's blob
// fetch before and after its first bytes) are also run in Chromium by e2e/cancel.spec.ts; the ones that run
// on the worker's CPU with no request open (resolving deltas, writing the git directory, the moment between
// the commit of the files and the registry's record) are held here, where the test can pause the worker.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { FlowProgress } from '../src/cloneFlow.ts';
import { engineContext } from '../workers/engine/engine.ts';
import type { Engine } from '../workers/engine/types.ts';
import type { CrashPoint } from '../workers/store/crashPoints.ts';
import { pauseAt } from './support/crash.ts';
import { gitBuffer } from './support/git.ts';
import type { WorkerCall } from './support/workerBoundary.ts';

const link = vi.hoisted(() => ({ calls: [] as WorkerCall[], engine: undefined as unknown as Engine }));

vi.mock('../src/gitClient.ts', async () => {
  const { linkedEngine } = await import('./support/workerBoundary.ts');
  const { testEngine } = await import('./support/engine.ts');
  const { engine } = testEngine();
  link.engine = engine;
  // Every delta resolved after the last byte, as with no room to keep bases while receiving: a pack this
  // small is otherwise resolved whole as it arrives, and there is no "resolving" left to cancel.
  const { client, calls } = linkedEngine(engine, {
    clone: (args, hooks) =>
      engine.clone({ ...args, limits: { ...args.limits, arrivalCacheBytes: 0 } }, hooks),
  });
  link.calls = calls;
  return { gitClient: client };
});

const { cloneAndCheckout } = await import('../src/cloneFlow.ts');
const engine = link.engine;
const ctx = engineContext(engine);

const serverUrl = inject('gitServerUrl');
const fixturesDir = inject('fixturesDir');
const url = `${serverUrl}/small-sized.git`;

/** The repos the registry names and the repo databases IndexedDB holds. */
async function stored(): Promise<{ repos: string[]; databases: string[] }> {
  const repos = (await engine.listRepos()).map((r) => r.id).sort();
  const databases = (await indexedDB.databases())
    .map((d) => d.name ?? '')
    .filter((n) => n.startsWith('blobless-repo-'))
    .sort();
  return { repos, databases };
}

/**
 * The UI's clone with a depth (the whole history: small-sized.git has 300 commits), so it is clone then
 * checkout, as before the first view; cancelled by `cancel` (given the controller the Cancel button
 * aborts); its error. The default clone's first-view pack has no deltas to resolve and no checkout.
 */
async function cancelledFlow(
  cancel: (controller: AbortController, p: FlowProgress) => void,
): Promise<Error & { code: string }> {
  const controller = new AbortController();
  try {
    await cloneAndCheckout({ url, depth: 1000 }, (p) => cancel(controller, p), controller.signal);
  } catch (err) {
    return err as Error & { code: string };
  }
  throw new Error('the clone was not cancelled');
}

/** The worker side's view of the flow's clone call (the last one made). */
const workerClone = () => link.calls.filter((c) => c.method === 'clone').at(-1)!;

/**
 * Holds the flow (the default one: the first view) at `point`, presses Cancel there, and lets the worker go
 * on once the abort has crossed.
 */
async function cancelledAt(point: CrashPoint): Promise<Error & { code: string }> {
  const pause = pauseAt(ctx, point);
  const controller = new AbortController();
  const flow = cloneAndCheckout({ url }, () => undefined, controller.signal).then(
    () => {
      throw new Error('the clone was not cancelled');
    },
    (err: Error & { code: string }) => err,
  );
  try {
    await pause.paused;
    controller.abort();
    // A message across the link: quick, but vitest's 1 s default is short on a machine another job keeps busy.
    await vi.waitFor(() => expect(workerClone().signal?.aborted).toBe(true), { timeout: 15_000 });
  } finally {
    pause.resume();
  }
  return flow;
}

describe('Cancel of the UI clone through the worker boundary leaves what was stored before, and nothing of the clone', () => {
  let before: Awaited<ReturnType<typeof stored>>;
  let kept: string;

  beforeAll(async () => {
    kept = (await engine.clone({ url: `${serverUrl}/basic.git` })).repoId;
    before = await stored();
    expect(before.repos).toEqual([kept]);
  });

  afterAll(async () => {
    for (const r of await engine.listRepos()) await engine.repo(r.id).delete();
  });

  /** Nothing of the cancelled clone is stored, and the repo stored before still reads as git has it. */
  async function expectOnlyBefore(): Promise<void> {
    expect(await stored()).toEqual(before);
    const file = await engine.repo(kept).readFile({ ref: 'HEAD', path: 'README.md' });
    expect(Buffer.from(file.bytes)).toEqual(
      await gitBuffer(['show', 'HEAD:README.md'], { cwd: join(fixturesDir, 'basic.git') }),
    );
  }

  it('while resolving deltas', async () => {
    // The resolver yields to the event loop every 100 ms of work, and only there can a message (the abort)
    // come in. A clock that moves a second per reading makes it yield at every chance, so a Cancel pressed
    // on the first "resolving" the page shows lands while deltas are still being resolved.
    let now = performance.now();
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => (now += 1000));
    let err: Error & { code: string };
    try {
      err = await cancelledFlow((controller, p) => {
        if (p.phase === 'resolving') controller.abort();
      });
    } finally {
      clock.mockRestore();
    }
    expect(err.code, err.message).toBe('ABORTED');
    const phases = workerClone().progress;
    const resolving = phases.filter((p) => p.phase === 'resolving');
    expect(resolving.length).toBeGreaterThan(0);
    expect(resolving.some((p) => p.resolved === p.total)).toBe(false);
    expect(phases.map((p) => p.phase)).not.toContain('writing');
    await expectOnlyBefore();
  });

  it('while writing the git directory, before it is committed', async () => {
    const err = await cancelledAt('clone:files-written');
    expect(err.code, err.message).toBe('ABORTED');
    expect(workerClone().progress.at(-1)?.phase).toBe('writing');
    await expectOnlyBefore();
  });

  it('after the database was written, before the registry names it', async () => {
    const err = await cancelledAt('clone:files-committed');
    expect(err.code, err.message).toBe('ABORTED');
    await expectOnlyBefore();
  });

  it('in the checkout, after blob bytes arrived', async () => {
    const err = await cancelledFlow((controller, p) => {
      if (p.phase === 'fetching-blobs' && p.bytes > 0) controller.abort();
    });
    expect(err.code, err.message).toBe('ABORTED');
    const checkout = link.calls.filter((c) => c.method === 'checkout').at(-1)!;
    expect(checkout.signal?.aborted).toBe(true);
    expect(checkout.progress.some((p) => p.phase === 'fetching-blobs' && Number(p.bytes) > 0)).toBe(true);
    expect(checkout.progress.map((p) => p.phase)).not.toContain('writing-files');
    await expectOnlyBefore();
  });
});
