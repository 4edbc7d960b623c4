/**
 * The widget's postMessage link to the page that embeds it (docs/EMBED.md). Every message carries
 * `source: 'blobless-embed'` so a host can tell them from other frames' messages.
 *
 * Out: `ready`, `resize {height}`, `loaded {repo, ref, commit, path}`, `error {code, message}`.
 * In: `navigate {ref?, path?, lines?}`, obeyed only from the parent window and only from an origin listed
 * in `allowedOrigins`; everything else is ignored without a word.
 *
 * Where it posts: to the parent's origin once known (from the browser, `location.ancestorOrigins`, or from
 * the referrer, or from the first message accepted). Until then, with `allowedOrigins`, to each listed
 * origin by name (the browser delivers only to the one the parent has); without, to `*`: the messages
 * carry only what the iframe's own address already tells the parent.
 */
import { type LineRange, parseLines } from './params.ts';

export const MESSAGE_SOURCE = 'blobless-embed';

export type WidgetMessage =
  | { type: 'ready' }
  | { type: 'resize'; height: number }
  | { type: 'loaded'; repo: string; ref: string; commit: string; path: string }
  | { type: 'error'; code: string; message: string };

export interface NavigateRequest {
  ref?: string;
  path?: string;
  lines?: LineRange | null;
}

type Listener = (request: NavigateRequest) => void;

interface FrameWindow {
  parent: unknown;
  location: { ancestorOrigins?: ArrayLike<string> };
  addEventListener(type: 'message', listener: (e: MessageEvent) => void): void;
  removeEventListener(type: 'message', listener: (e: MessageEvent) => void): void;
}

interface ParentWindow {
  postMessage(message: unknown, targetOrigin: string): void;
}

export class HostChannel {
  #parentOrigin: string | null;
  /** The browser named a parent outside the list: it is told nothing. */
  readonly #refused: boolean;
  readonly #allowed: Set<string>;
  readonly #listeners = new Set<Listener>();
  readonly #win: FrameWindow;
  readonly #onMessage = (e: MessageEvent) => this.#receive(e);

  constructor(allowedOrigins: string[], win: FrameWindow, referrer: string) {
    this.#win = win;
    this.#allowed = new Set(allowedOrigins);
    const seen = win.location.ancestorOrigins?.[0] ?? originOf(referrer);
    // A known parent outside a given list is not told anything.
    this.#parentOrigin = seen && (this.#allowed.size === 0 || this.#allowed.has(seen)) ? seen : null;
    this.#refused = !!seen && this.#allowed.size > 0 && !this.#allowed.has(seen);
    win.addEventListener('message', this.#onMessage);
  }

  get embedded(): boolean {
    return this.#win.parent !== this.#win;
  }

  /** The origin messages go to, once known. */
  get parentOrigin(): string | null {
    return this.#parentOrigin;
  }

  post(message: WidgetMessage): void {
    if (!this.embedded || this.#refused) return;
    const parent = this.#win.parent as ParentWindow;
    const payload = { source: MESSAGE_SOURCE, ...message };
    const targets = this.#parentOrigin
      ? [this.#parentOrigin]
      : this.#allowed.size > 0
        ? [...this.#allowed]
        : ['*'];
    for (const target of targets) parent.postMessage(payload, target);
  }

  onNavigate(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  close(): void {
    this.#win.removeEventListener('message', this.#onMessage);
    this.#listeners.clear();
  }

  #receive(e: MessageEvent): void {
    // Only the embedding page, and only from an origin it was told to trust.
    if (e.source !== this.#win.parent || !this.#allowed.has(e.origin)) return;
    const request = parseNavigate(e.data);
    if (!request) return;
    this.#parentOrigin = e.origin;
    for (const listener of this.#listeners) listener(request);
  }
}

function originOf(url: string): string | null {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/** A `navigate` message, checked field by field; null for anything else. */
export function parseNavigate(data: unknown): NavigateRequest | null {
  if (typeof data !== 'object' || data === null) return null;
  const d = data as Record<string, unknown>;
  if (d.type !== 'navigate') return null;
  const out: NavigateRequest = {};
  if (d.ref !== undefined) {
    if (typeof d.ref !== 'string' || d.ref.length > 256) return null;
    out.ref = d.ref;
  }
  if (d.path !== undefined) {
    if (typeof d.path !== 'string' || d.path.length > 4096) return null;
    out.path = d.path.replace(/^\/+|\/+$/g, '');
  }
  if (d.lines !== undefined) {
    if (d.lines === null || d.lines === '') out.lines = null;
    else if (typeof d.lines === 'string') out.lines = parseLines(d.lines);
    else if (typeof d.lines === 'object') {
      const l = d.lines as { from?: unknown; to?: unknown };
      out.lines = parseLines(`${Number(l.from)}-${Number(l.to ?? l.from)}`);
    } else return null;
  }
  return out;
}
