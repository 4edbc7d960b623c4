import { describe, expect, it } from 'vitest';
import { HostChannel, parseNavigate } from '../src/embed/hostChannel.ts';
import { parseEmbedParams, parseLines, parseOrigins } from '../src/embed/params.ts';

type Posted = { message: unknown; target: string };

/** A frame's window as the channel sees it: its parent records what is posted to it. */
function frame(opts: { ancestor?: string } = {}) {
  const posted: Posted[] = [];
  const listeners: ((e: MessageEvent) => void)[] = [];
  const parent = { postMessage: (message: unknown, target: string) => posted.push({ message, target }) };
  const win = {
    parent,
    location: { ancestorOrigins: opts.ancestor ? [opts.ancestor] : undefined },
    addEventListener: (_: 'message', l: (e: MessageEvent) => void) => listeners.push(l),
    removeEventListener: () => undefined,
  };
  const deliver = (data: unknown, origin: string, source: unknown = parent) => {
    for (const l of listeners) l({ data, origin, source } as MessageEvent);
  };
  return { win, parent, posted, deliver };
}

const HOST = 'https://docs.example.com';
const OTHER = 'https://evil.example.net';

describe('HostChannel', () => {
  it('obeys navigate only from the parent window and a listed origin', () => {
    const f = frame();
    const channel = new HostChannel([HOST], f.win, '');
    const got: unknown[] = [];
    channel.onNavigate((r) => got.push(r));
    f.deliver({ type: 'navigate', path: 'a.txt' }, OTHER);
    f.deliver({ type: 'navigate', path: 'b.txt' }, HOST, {});
    expect(got).toEqual([]);
    f.deliver({ type: 'navigate', path: 'c.txt', lines: '3-5' }, HOST);
    expect(got).toEqual([{ path: 'c.txt', lines: { from: 3, to: 5 } }]);
  });

  it('obeys nobody when no origin is listed', () => {
    const f = frame();
    const channel = new HostChannel([], f.win, `${HOST}/page`);
    const got: unknown[] = [];
    channel.onNavigate((r) => got.push(r));
    f.deliver({ type: 'navigate', path: 'a.txt' }, HOST);
    expect(got).toEqual([]);
  });

  it('posts to the parent origin the browser names, never to *', () => {
    const f = frame({ ancestor: HOST });
    new HostChannel([HOST], f.win, '').post({ type: 'ready' });
    expect(f.posted).toEqual([{ message: { source: 'blobless-embed', type: 'ready' }, target: HOST }]);
  });

  it('tells a parent outside the list nothing', () => {
    const f = frame({ ancestor: OTHER });
    new HostChannel([HOST], f.win, '').post({ type: 'ready' });
    expect(f.posted).toEqual([]);
  });

  it('with the parent unknown, posts to each listed origin by name, and to the parent alone once it spoke', () => {
    const f = frame();
    const channel = new HostChannel([HOST, 'https://b.example'], f.win, '');
    channel.post({ type: 'ready' });
    expect(f.posted.map((p) => p.target)).toEqual([HOST, 'https://b.example']);
    f.deliver({ type: 'navigate', ref: 'main' }, HOST);
    f.posted.length = 0;
    channel.post({ type: 'resize', height: 10 });
    expect(f.posted.map((p) => p.target)).toEqual([HOST]);
  });

  it('posts to * only while it knows no parent origin and was given no list', () => {
    const f = frame();
    new HostChannel([], f.win, '').post({ type: 'ready' });
    expect(f.posted.map((p) => p.target)).toEqual(['*']);
    const g = frame();
    new HostChannel([], g.win, `${HOST}/some/page`).post({ type: 'ready' });
    expect(g.posted.map((p) => p.target)).toEqual([HOST]);
  });

  it('is silent when not framed', () => {
    const f = frame();
    const alone = { ...f.win };
    alone.parent = alone as never;
    new HostChannel([], alone, '').post({ type: 'ready' });
    expect(f.posted).toEqual([]);
  });
});

describe('the widget parameters', () => {
  it('reads navigate messages field by field', () => {
    expect(parseNavigate({ type: 'navigate', ref: 'v1', path: '/a/b/', lines: { from: 9, to: 3 } })).toEqual({
      ref: 'v1',
      path: 'a/b',
      lines: { from: 3, to: 9 },
    });
    expect(parseNavigate({ type: 'navigate', lines: null })).toEqual({ lines: null });
    expect(parseNavigate({ type: 'navigate', path: 42 })).toBeNull();
    expect(parseNavigate({ type: 'other' })).toBeNull();
    expect(parseNavigate('navigate')).toBeNull();
  });

  it('reads lines, origins and the rest of the address', () => {
    expect(parseLines('10-20')).toEqual({ from: 10, to: 20 });
    expect(parseLines('L7')).toEqual({ from: 7, to: 7 });
    expect(parseLines('0-3')).toBeNull();
    expect(parseLines('x')).toBeNull();
    expect(parseOrigins('https://a.example/path, javascript:alert(1) http://b.example:8080')).toEqual([
      'https://a.example',
      'http://b.example:8080',
    ]);
    expect(parseEmbedParams('?repo=https://h/r.git&path=/src/x.ts&lines=2-4&theme=dark')).toEqual({
      repo: 'https://h/r.git',
      ref: '',
      path: 'src/x.ts',
      lines: { from: 2, to: 4 },
      theme: 'dark',
      allowedOrigins: [],
    });
  });
});
