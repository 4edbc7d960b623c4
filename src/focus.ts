let navigated = false;

/** Said by the router on every in-app navigation (not the page's first load). */
export function noteNavigation(): void {
  navigated = true;
}

/**
 * Where focus goes when a view changes. A click that navigates usually removes the element it was on
 * (a folder's row, a link in a list), which leaves focus on `<body>`: a keyboard or screen reader user
 * would start again from the top of the page. So a view that has just appeared takes focus on its main
 * element, but only when focus was lost that way: focus a person put somewhere that still exists (the
 * ref picker, a search box) stays where it is.
 */
export function focusIfLost(el: HTMLElement | null | undefined): void {
  // A page just loaded starts at its top, as every page does; only an in-app move takes focus along.
  if (!el || !navigated) return;
  const active = document.activeElement;
  if (active && active !== document.body && active.isConnected) return;
  // The view scrolls itself (to `#L10`, say); focus must not scroll it back.
  el.focus({ preventScroll: true });
}
