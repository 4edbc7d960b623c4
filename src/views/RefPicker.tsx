import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { CheckoutProgress as Progress, RefList } from '../../workers/engine/index.ts';
import { withToken } from '../auth/withToken.ts';
import { whileBusy } from '../busy.ts';
import { type BloblessError, gitClient } from '../gitClient.ts';
import { filterRefs, sortBranches, sortTags } from '../refOrder.ts';
import { navigate } from '../route.ts';
import { CloneProgress } from './CloneProgress.tsx';

type Kind = 'branches' | 'tags';

/**
 * The ref picker, a combobox (WAI-ARIA combobox with a listbox popup): type to filter, arrows to move,
 * Enter or a click to switch; typing alone never switches. Branches (the default one first) and tags
 * (newest version first) are two tabs. Switching runs the lazy checkout, which fetches only the blobs the
 * new tree lacks, with its progress and a Cancel.
 */
export function RefPicker({
  repoId,
  current,
  refs,
  open,
  onClose,
}: {
  repoId: string;
  current: string;
  refs: RefList | null;
  open: boolean;
  /** `returnFocus`: closed from the keyboard (Escape), so focus goes back to the button. */
  onClose: (returnFocus: boolean) => void;
}) {
  const [query, setQuery] = useState('');
  const [kind, setKind] = useState<Kind>(() => (refs?.tags.includes(current) ? 'tags' : 'branches'));
  const [active, setActive] = useState(0);
  const [progress, setProgress] = useState<Progress | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [controller, setController] = useState<AbortController | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const box = useRef<HTMLDivElement>(null);

  const branches = refs ? sortBranches(refs.branches, refs.defaultBranch) : [];
  const tags = refs ? sortTags(refs.tags) : [];
  const found = { branches: filterRefs(branches, query), tags: filterRefs(tags, query) };
  // A query that matches only in the other tab shows that tab: "4.19" finds the tags from Branches too.
  const shownKind: Kind = found[kind].length === 0 && found[other(kind)].length > 0 ? other(kind) : kind;
  const shown = found[shownKind];

  // In the commit that opens the picker, not after the paint: a person (or a test) who types at once
  // would otherwise have what they typed wiped by the reset a moment later, on a busy machine.
  useLayoutEffect(() => {
    if (!open) return;
    setQuery('');
    setError(null);
    input.current?.focus();
    const onDown = (e: PointerEvent) => {
      if (box.current && !box.current.parentElement?.contains(e.target as Node)) onClose(false);
    };
    document.addEventListener('pointerdown', onDown);
    return () => document.removeEventListener('pointerdown', onDown);
  }, [open]);
  useEffect(() => setActive(0), [query, shownKind]);
  useEffect(() => {
    box.current?.querySelector('[aria-selected="true"]')?.scrollIntoView({ block: 'nearest' });
  }, [active, shownKind]);

  async function switchTo(ref: string) {
    onClose(true);
    if (ref === current) return;
    setError(null);
    setProgress({ phase: 'fetching-blobs', objects: 0, totalObjects: 0, bytes: 0, requests: 0 });
    const abort = new AbortController();
    setController(abort);
    try {
      await whileBusy('checkout', () =>
        withToken(() =>
          gitClient
            .repo(repoId)
            .checkout(
              { ref, force: false },
              { onProgress: (p: Progress) => setProgress(p), signal: abort.signal },
            ),
        ),
      );
      navigate({ ref, commit: null });
    } catch (err) {
      // Cancelled (while waiting for another tab, say): the working tree is as it was; nothing to say.
      if ((err as BloblessError).code !== 'ABORTED') setError((err as BloblessError).message);
    } finally {
      setProgress(null);
      setController(null);
    }
  }

  function onKeyDown(e: KeyboardEvent) {
    if (e.key === 'ArrowDown') setActive((a) => Math.min(shown.length - 1, a + 1));
    else if (e.key === 'ArrowUp') setActive((a) => Math.max(0, a - 1));
    else if (e.key === 'Home' && e.ctrlKey) setActive(0);
    else if (e.key === 'End' && e.ctrlKey) setActive(shown.length - 1);
    else if (e.key === 'Enter' && shown[active]) void switchTo(shown[active]);
    else if (e.key === 'Escape') onClose(true);
    else return;
    e.preventDefault();
  }

  const optionId = (i: number) => `ref-option-${i}`;
  return (
    <>
      {open && (
        <div
          class="ref-picker"
          ref={box}
          role="dialog"
          aria-label="Switch branch or tag"
          data-testid="ref-picker"
          onKeyDown={(e) => {
            if (e.key === 'Escape') {
              e.preventDefault();
              onClose(true);
            }
          }}
        >
          <input
            ref={input}
            type="text"
            role="combobox"
            aria-expanded="true"
            aria-controls="ref-options"
            aria-autocomplete="list"
            aria-activedescendant={shown[active] ? optionId(active) : undefined}
            aria-label="Find a branch or tag"
            placeholder={refs ? 'Find a branch or tag…' : 'Reading the branches and tags…'}
            data-testid="ref-search"
            value={query}
            onInput={(e) => setQuery(e.currentTarget.value)}
            onKeyDown={onKeyDown}
          />
          <div class="ref-tabs" role="tablist" aria-label="Kind of ref">
            {(['branches', 'tags'] as const).map((k) => (
              <button
                key={k}
                type="button"
                role="tab"
                class="link"
                aria-selected={shownKind === k}
                aria-controls="ref-options"
                data-testid={`ref-tab-${k}`}
                onClick={() => {
                  setKind(k);
                  input.current?.focus();
                }}
              >
                {k === 'branches' ? 'Branches' : 'Tags'} <span class="muted">{found[k].length}</span>
              </button>
            ))}
          </div>
          <div
            id="ref-options"
            class="ref-options"
            role="listbox"
            aria-label={shownKind === 'branches' ? 'Branches' : 'Tags'}
          >
            {shown.map((name, i) => (
              // biome-ignore lint/a11y/useKeyWithClickEvents: the combobox's input carries the keys (aria-activedescendant)
              <div
                key={`${shownKind}:${name}`}
                id={optionId(i)}
                role="option"
                tabIndex={-1}
                aria-selected={i === active}
                data-ref={name}
                class={i === active ? 'ref-option active' : 'ref-option'}
                onClick={() => void switchTo(name)}
                onMouseMove={() => setActive(i)}
              >
                <span class="ref-check" aria-hidden="true">
                  {name === current ? '✓' : ''}
                </span>
                <span class="ref-option-name">{name}</span>
                {shownKind === 'branches' && name === refs?.defaultBranch && (
                  <span class="badge">default</span>
                )}
                {name === current && <span class="sr-only">(shown now)</span>}
              </div>
            ))}
            {refs && shown.length === 0 && <p class="muted ref-none">Nothing matches “{query}”.</p>}
          </div>
        </div>
      )}
      {progress && <CloneProgress progress={progress} />}
      {progress && controller && (
        <button
          type="button"
          class="secondary small"
          data-testid="checkout-cancel"
          onClick={() => controller.abort()}
        >
          Cancel
        </button>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </>
  );
}

function other(kind: Kind): Kind {
  return kind === 'branches' ? 'tags' : 'branches';
}
