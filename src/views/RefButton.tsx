import { useEffect, useRef, useState } from 'preact/hooks';
import type { RefList, RepoSummary } from '../../workers/engine/index.ts';
import { gitClient } from '../gitClient.ts';
import { lazyView } from '../lazyView.tsx';

const RefPicker = lazyView(() => import('./RefPicker.tsx').then((m) => m.RefPicker));

/** What the header calls the ref shown: a branch or tag by its name, a commit no name points at by its id. */
export function refLabel(current: string, refs: RefList | null): { kind: string; name: string } {
  if (!refs) return { kind: '', name: /^[0-9a-f]{40}$/.test(current) ? current.slice(0, 10) : current };
  if (refs.branches.includes(current)) return { kind: 'branch', name: current };
  if (refs.tags.includes(current)) return { kind: 'tag', name: current };
  if (/^[0-9a-f]{40}$/.test(current)) {
    const tag = Object.keys(refs.tagCommits).find((t) => refs.tagCommits[t] === current);
    if (tag) return { kind: 'tag', name: tag };
    return { kind: 'commit', name: current.slice(0, 10) };
  }
  return { kind: '', name: current };
}

/**
 * The header's ref: a button naming the branch, tag or commit shown, which opens the ref picker (its
 * code loaded on first use). The picker stays mounted while a switch it started runs, to show its progress.
 */
export function RefButton({
  repo,
  current,
  grown,
}: {
  repo: RepoSummary;
  current: string;
  /** Changes when a fetch or the history fill brought refs: they are read again (the picker stays open). */
  grown: string;
}) {
  const [refs, setRefs] = useState<RefList | null>(null);
  const [open, setOpen] = useState(false);
  const [used, setUsed] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    // Each history step stored reads the refs again; an older read that answers last (it waited longer in
    // the worker) must not put back the list from before the tags arrived.
    let live = true;
    gitClient
      .repo(repo.id)
      .listRefs()
      .then(
        (r) => live && setRefs(r),
        () => live && setRefs(null),
      );
    return () => {
      live = false;
    };
  }, [repo.id, grown]);
  const { kind, name } = refLabel(current, refs);
  return (
    <div class="ref-switcher">
      <button
        ref={button}
        type="button"
        class="secondary ref-button"
        data-testid="branch-select"
        aria-haspopup="dialog"
        aria-expanded={open}
        title={kind ? `${kind} ${name}: switch branch or tag` : 'Switch branch or tag'}
        onMouseEnter={RefPicker.preload}
        onClick={() => {
          setUsed(true);
          setOpen(!open);
        }}
      >
        {kind && <span class="ref-kind">{kind}</span>}
        <span class="ref-name" data-testid="ref-name">
          {name}
        </span>
        <span aria-hidden="true"> ▾</span>
      </button>
      {used && (
        <RefPicker
          repoId={repo.id}
          current={current}
          refs={refs}
          open={open}
          onClose={(returnFocus) => {
            setOpen(false);
            if (returnFocus) button.current?.focus();
          }}
        />
      )}
    </div>
  );
}
