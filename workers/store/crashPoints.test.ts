import { afterEach, describe, expect, it } from 'vitest';
import { type CrashPoint, CrashPoints } from './crashPoints.ts';

const globals = globalThis as { __bloblessCrashAt?: string; __bloblessCrashedAt?: string };

afterEach(() => {
  delete globals.__bloblessCrashAt;
  delete globals.__bloblessCrashedAt;
});

/** Whether `p` is still pending after the event loop has had a turn. */
async function pending(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void p.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((r) => setTimeout(r, 20));
  return !settled;
}

describe('CrashPoints', () => {
  it('without a hook or a global, every point passes at once', async () => {
    const points = new CrashPoints();
    expect(await pending(points.at('clone:files-written'))).toBe(false);
  });

  it('runs the hook at every point, waits for it, and passes once it is unset', async () => {
    const points = new CrashPoints();
    const seen: CrashPoint[] = [];
    let release = () => {};
    points.setHook((point) => {
      seen.push(point);
      return new Promise<void>((r) => (release = r));
    });
    const at = points.at('fetch:files-written');
    expect(await pending(at)).toBe(true);
    expect(seen).toEqual(['fetch:files-written']);
    release();
    await at;
    points.setHook(undefined);
    await points.at('fetch:files-committed');
    expect(seen).toEqual(['fetch:files-written']);
  });

  it('a hook that throws stops the operation there', async () => {
    const points = new CrashPoints();
    points.setHook(() => {
      throw new Error('crashed');
    });
    await expect(points.at('commit:files-written')).rejects.toThrow('crashed');
  });

  it('stands still at the point the global names, and says so; other points pass', async () => {
    const points = new CrashPoints();
    globals.__bloblessCrashAt = 'checkout:files-written';
    expect(await pending(points.at('checkout:blobs-stored'))).toBe(false);
    expect(globals.__bloblessCrashedAt).toBeUndefined();
    expect(await pending(points.at('checkout:files-written'))).toBe(true);
    expect(globals.__bloblessCrashedAt).toBe('checkout:files-written');
  });
});
