// The namespace a README's ids live in, `user-content-` as on GitHub, so that none meets one of the app's;
// and what the renderer holds back from loading until the reader asks.

export const ANCHOR_PREFIX = 'user-content-';

/** `#name` as the in-page link to what the renderer named `user-content-name`. */
export function inPageAnchor(hash: string): string {
  const name = hash.slice(1);
  return `#${name.startsWith(ANCHOR_PREFIX) ? name : ANCHOR_PREFIX + name}`;
}

/** Where held attributes wait, as JSON `[namespace, name, value][]`. */
export const HELD_ATTRIBUTE = 'data-held';

/** Gives back what `holdExternal` held in `root`: the reader asked for it. */
export function loadHeldResources(root: Element): void {
  for (const el of root.querySelectorAll(`[${HELD_ATTRIBUTE}]`)) {
    const held = JSON.parse(el.getAttribute(HELD_ATTRIBUTE) ?? '[]') as [string | null, string, string][];
    el.removeAttribute(HELD_ATTRIBUTE);
    for (const [ns, name, value] of held) el.setAttributeNS(ns, name, value);
  }
}
