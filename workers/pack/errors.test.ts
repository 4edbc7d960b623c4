import { describe, expect, it } from 'vitest';
import { formatBytes, objectTooLarge, PACK_ERROR_CODES, PackError, throwIfAborted } from './errors.ts';

describe('PackError', () => {
  it('says what was found, then what to do, and keeps both apart for programs', () => {
    const cause = new Error('inner');
    const e = new PackError('PACK_TRUNCATED', 'The pack ends at byte 12.', { cause });
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('PackError');
    expect(e.code).toBe('PACK_TRUNCATED');
    expect(e.detail).toBe('The pack ends at byte 12.');
    expect(e.message).toBe(
      'The pack ends at byte 12. The download ended early; nothing was stored. Try again.',
    );
    expect(e.cause).toBe(cause);
    expect(e.limit).toBeUndefined();
  });

  it('has no cause unless given one', () => {
    expect('cause' in new PackError('PACK_CORRUPT', 'Bad.')).toBe(false);
    expect('cause' in new PackError('PACK_CORRUPT', 'Bad.', { limit: 'x' })).toBe(false);
    // A cause given as a falsy value is still the cause.
    const e = new PackError('PACK_CORRUPT', 'Bad.', { cause: 0 });
    expect(e.cause).toBe(0);
  });

  it('ends every code with advice of its own', () => {
    const advice = PACK_ERROR_CODES.map((code) => new PackError(code, 'D.').message.slice('D. '.length));
    for (const a of advice) expect(a).toMatch(/^[A-Z].*\.$/);
    expect(new Set(advice).size).toBe(advice.length);
  });

  it('names the setting an object too large exceeded', () => {
    const e = objectTooLarge('Blob 0123', 3 * 1024 * 1024, 2 * 1024 * 1024);
    expect(e.code).toBe('PACK_OBJECT_TOO_LARGE');
    expect(e.limit).toBe('maxObjectSize');
    expect(e.detail).toBe('Blob 0123 declares 3.0 MiB, more than the limit of 2.0 MiB (maxObjectSize).');
    expect(e.message.startsWith(`${e.detail} Nothing was stored.`)).toBe(true);
  });
});

describe('formatBytes', () => {
  it('counts bytes below 1 KiB, then one decimal below 100 of a unit, then whole units', () => {
    expect(formatBytes(0)).toBe('0 bytes');
    expect(formatBytes(1023)).toBe('1023 bytes');
    expect(formatBytes(1024)).toBe('1.0 KiB');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(100 * 1024 - 1)).toBe('100.0 KiB');
    expect(formatBytes(100 * 1024)).toBe('100 KiB');
    expect(formatBytes(1024 * 1024 - 1)).toBe('1024 KiB');
    expect(formatBytes(1024 ** 2)).toBe('1.0 MiB');
    expect(formatBytes(1.25 * 1024 ** 3)).toBe('1.3 GiB');
    expect(formatBytes(1024 ** 4)).toBe('1.0 TiB');
    expect(formatBytes(5 * 1024 ** 5)).toBe('5.0 PiB');
    // PiB is the largest unit: larger sizes stay in it.
    expect(formatBytes(2048 * 1024 ** 5)).toBe('2048 PiB');
  });
});

describe('throwIfAborted', () => {
  it('throws ABORTED with the reason as its cause once the signal is aborted, and nothing before', () => {
    throwIfAborted(undefined);
    const controller = new AbortController();
    throwIfAborted(controller.signal);
    const reason = new Error('operation began');
    controller.abort(reason);
    let thrown: unknown;
    try {
      throwIfAborted(controller.signal);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(PackError);
    expect(thrown).toMatchObject({
      code: 'ABORTED',
      message: 'Receiving the pack was cancelled. Nothing was stored.',
    });
    expect((thrown as PackError).cause).toBe(reason);
  });
});
