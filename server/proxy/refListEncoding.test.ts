import { describe, expect, it } from 'vitest';
import { acceptsGzip, isRefListRequest, opensWithLsRefs } from './refListEncoding.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('acceptsGzip', () => {
  it.each([
    ['gzip, deflate, br', true],
    ['deflate, gzip', true],
    ['br;q=1.0, gzip;q=0.8', true],
    ['x-gzip', true],
    ['*', true],
    ['gzip;q=0, *', false],
    ['*;q=0', false],
    ['GZIP', true],
    ['identity', false],
    ['br', false],
    ['', false],
    [null, false],
  ])('%s: %s', (header, takes) => {
    expect(acceptsGzip(header)).toBe(takes);
  });
});

describe('which answers are ref lists', () => {
  it('every info/refs GET, and an upload-pack POST opening with command=ls-refs', () => {
    expect(isRefListRequest('GET', '/r.git/info/refs', undefined)).toBe(true);
    expect(isRefListRequest('POST', '/r.git/git-upload-pack', bytes('0014command=ls-refs\n0000'))).toBe(true);
  });

  it('never a fetch, a push, a body too short to tell or one that came gzipped', () => {
    expect(isRefListRequest('POST', '/r.git/git-upload-pack', bytes('0011command=fetch0001'))).toBe(false);
    expect(isRefListRequest('POST', '/r.git/git-receive-pack', bytes('0014command=ls-refs\n'))).toBe(false);
    expect(isRefListRequest('POST', '/r.git/git-upload-pack', bytes('0014command=ls-ref'))).toBe(false);
    expect(isRefListRequest('POST', '/r.git/git-upload-pack', undefined)).toBe(false);
    // A v0 fetch opens with a want line.
    expect(opensWithLsRefs(bytes(`0032want ${'1'.repeat(40)}\n`))).toBe(false);
  });
});
