import { describe, expect, it } from 'vitest';
import { TransportError } from './errors.ts';

describe('TransportError', () => {
  it('is named for the layers above, which tell errors apart by name across the worker boundary', () => {
    const err = new TransportError('HTTP_ERROR', 'HTTP 503', 503, {
      retryAfterMs: 2000,
      beforeResponse: false,
    });
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('TransportError');
    expect(err).toMatchObject({ code: 'HTTP_ERROR', message: 'HTTP 503', status: 503, retryAfterMs: 2000 });
    expect(err.beforeResponse).toBe(false);
    expect(String(err)).toBe('TransportError: HTTP 503');
  });
});
