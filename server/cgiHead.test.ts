import { describe, expect, it } from 'vitest';
import { parseCgiHead } from './cgiHead.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('parseCgiHead', () => {
  it('reads headers ended by CRLF, as git http-backend writes them, and finds the body', () => {
    const buf = bytes('Content-Type: text/plain\r\nCache-Control: no-cache\r\n\r\nbody');
    const head = parseCgiHead(buf);
    expect(head?.status).toBe(200);
    expect(head?.headers).toEqual([
      ['Content-Type', 'text/plain'],
      ['Cache-Control', 'no-cache'],
    ]);
    expect(new TextDecoder().decode(buf.subarray(head!.bodyStart))).toBe('body');
  });

  it('takes the status from the Status header and accepts bare LF line ends', () => {
    const head = parseCgiHead(bytes('Status: 403 Forbidden\nContent-Type: text/plain\n\n'));
    expect(head).toMatchObject({
      status: 403,
      statusText: 'Forbidden',
      headers: [['Content-Type', 'text/plain']],
    });
  });

  it('waits for more bytes until the blank line has arrived', () => {
    expect(parseCgiHead(bytes('Content-Type: text/plain\r\n'))).toBeUndefined();
    expect(parseCgiHead(bytes('Content-Ty'))).toBeUndefined();
  });
});
