// Tests shorten the quiet period (test/support/engine.ts); the wait it stands for is checked here, at the
// app's period and at a shortened one.
import { describe, expect, it } from 'vitest';
import { FOREGROUND_QUIET_MS, ForegroundActivity } from './foregroundActivity.ts';

describe('ForegroundActivity', () => {
  it('waits FOREGROUND_QUIET_MS, 500 ms, unless told otherwise', () => {
    expect(FOREGROUND_QUIET_MS).toBe(500);
    expect(new ForegroundActivity().quietMs).toBe(FOREGROUND_QUIET_MS);
  });

  it('is active while a call runs, and for quietMs after it ended; quiet() resolves only then', async () => {
    const activity = new ForegroundActivity();
    activity.quietMs = 150;
    expect(activity.active()).toBe(false);
    let finish = () => {};
    const call = activity.track(() => new Promise<void>((resolve) => (finish = resolve)));
    expect(activity.active()).toBe(true);
    let quietAt = 0;
    const quiet = activity.quiet().then(() => (quietAt = performance.now()));
    // A call in flight holds background work off however long it runs.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(activity.active()).toBe(true);
    expect(quietAt).toBe(0);
    const ended = performance.now();
    finish();
    await call;
    expect(activity.active()).toBe(true);
    await quiet;
    expect(quietAt - ended).toBeGreaterThanOrEqual(150);
    expect(activity.active()).toBe(false);
  });

  it('counts a call that throws as ended', () => {
    const activity = new ForegroundActivity();
    activity.quietMs = 0;
    expect(() =>
      activity.track(() => {
        throw new Error('no such repo');
      }),
    ).toThrow('no such repo');
    expect(activity.active()).toBe(false);
  });
});
