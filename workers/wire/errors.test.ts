import { describe, expect, it } from 'vitest';
import { RemoteError, WireError } from './errors.ts';

describe('WireError', () => {
  it('keeps its code, offset, limit and cause, and has no cause unless given one', () => {
    const cause = new Error('underneath');
    const error = new WireError('LIMIT_EXCEEDED', 'too big', {
      byteOffset: 7,
      cause,
      limit: 'maxLsRefsBytes',
    });
    expect(error).toMatchObject({
      name: 'WireError',
      code: 'LIMIT_EXCEEDED',
      byteOffset: 7,
      limit: 'maxLsRefsBytes',
    });
    expect(error.cause).toBe(cause);
    expect('cause' in new WireError('NOT_GIT', 'no', { byteOffset: 0 })).toBe(false);
  });
});

describe('RemoteError', () => {
  it("quotes the server's words trimmed, without a final dot, and says what to do by channel", () => {
    const refused = new RemoteError(' repository not.exported.\n', 'err-packet');
    expect(refused).toMatchObject({ name: 'RemoteError', code: 'REMOTE_ERROR', channel: 'err-packet' });
    expect(refused.remoteMessage).toBe('repository not.exported.');
    expect(refused.message).toBe(
      "The git server refused the request: repository not.exported. Check the repository's address and your " +
        'access to it, then try again.',
    );
    const aborted = new RemoteError('pack-objects died', 'sideband-3');
    expect(aborted.channel).toBe('sideband-3');
    expect(aborted.message).toBe(
      "The git server aborted while sending the pack: pack-objects died. Try again later, and tell the server's " +
        'owner if it keeps failing.',
    );
  });
});
