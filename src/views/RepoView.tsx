import { useEffect, useState } from 'preact/hooks';
import type { RepoRecord } from '../../workers/engine/index.ts';
import { gitClient } from '../gitClient.ts';
import { useHistoryFill } from '../historyFill.ts';
import { askWhoIsBusy, useRepoActivity } from '../repoActivity.ts';
import { navigate, type Route } from '../route.ts';
import { BlameView } from './BlameView.tsx';
import { CommitList } from './CommitList.tsx';
import { CommitView } from './CommitView.tsx';
import { CompareView } from './CompareView.tsx';
import { FileHistoryView } from './FileHistoryView.tsx';
import { FileTree } from './FileTree.tsx';
import { FileView } from './FileView.tsx';
import { GoToFile } from './GoToFile.tsx';
import { OpenFromLink } from './OpenFromLink.tsx';
import { RefSwitcher } from './RefSwitcher.tsx';
import { ShortcutSheet } from './ShortcutSheet.tsx';
import { StatusLine } from './StatusLine.tsx';
import { SyncButtons } from './SyncButtons.tsx';
import { WorkingTree } from './WorkingTree.tsx';

/** `?repo=` holds a stored repo's id or a repository URL (a deep link): a URL is cloned first if needed. */
export function RepoView({ route }: { route: Route }) {
  const [repo, setRepo] = useState<RepoRecord | null | undefined>(undefined);
  // Bumped after a fetch or pull, so every part of the view reads the repo again.
  const [synced, setSynced] = useState(0);
  const key = route.repo!;
  const activity = useRepoActivity();
  // Another tab committed a change to this repo (a checkout, a fetch): read it again, without a reload.
  const changes = activity.changes.get(repo?.id ?? key) ?? 0;
  useEffect(() => {
    setRepo((r) => (r?.id === key || r?.url === key ? r : undefined));
    gitClient
      .listRepos()
      .then((all) => setRepo(all.find((r) => r.id === key) ?? all.find((r) => r.url === key) ?? null));
  }, [key, changes]);
  // After a fetch or pull the record is read again in place (branch, head, shallow may have changed).
  useEffect(() => {
    if (synced === 0) return;
    gitClient.listRepos().then((all) => {
      const found = all.find((r) => r.id === key) ?? all.find((r) => r.url === key);
      if (found) setRepo(found);
    });
  }, [synced]);
  useEffect(() => {
    if (repo) askWhoIsBusy(repo.id);
  }, [repo?.id]);

  if (repo === undefined) return <p class="muted">Opening…</p>;
  if (repo === null) {
    if (/^https?:\/\//.test(key)) return <OpenFromLink url={key} gitRef={route.ref} onReady={setRepo} />;
    return (
      <section class="card">
        <p class="error">This repository is not stored in this browser (it may have been deleted).</p>
        <button type="button" onClick={() => navigate({ repo: null, path: '' })}>
          Back to your repositories
        </button>
      </section>
    );
  }
  const ref = route.ref ?? repo.branch ?? repo.headOid;
  const busyElsewhere = activity.busy.get(repo.id);
  return (
    <>
      {busyElsewhere && (
        <p class="card busy-elsewhere" role="status" data-testid="busy-elsewhere">
          Busy in another tab: {busyElsewhere}. What you see here updates when it is done.
        </p>
      )}
      {/* Keyed by the other tabs' changes: every view below reads the repo again. */}
      <StoredRepoView
        key={changes}
        repo={repo}
        route={route}
        gitRef={ref}
        synced={synced}
        onSynced={() => setSynced((n) => n + 1)}
      />
    </>
  );
}

function typing(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName));
}

function StoredRepoView({
  repo,
  route,
  gitRef: ref,
  synced,
  onSynced,
}: {
  repo: RepoRecord;
  route: Route;
  gitRef: string;
  /** Bumped after each fetch or pull: the parts keyed on it read the repo again. */
  synced: number;
  onSynced: () => void;
}) {
  const [dialog, setDialog] = useState<'goto' | 'keys' | null>(null);
  const [writing, setWriting] = useState(false);
  // Bumped by a commit or a branch switch from the working tree, so the views read the new HEAD.
  const [version, setVersion] = useState(0);
  // The commit the ref names now: what permalinks and `y` put in the address.
  const [commit, setCommit] = useState<string | undefined>(undefined);
  // A first-view clone's history, branches and tags arrive in the background while the repo is shown.
  const fill = useHistoryFill(repo);
  useEffect(() => {
    setCommit(undefined);
    gitClient
      .repo(repo.id)
      .readCommit({ ref })
      .then(
        (c) => setCommit(c.oid),
        () => undefined,
      );
  }, [repo.id, ref, version, synced]);

  useEffect(() => {
    function onKey(e: KeyboardEvent) {
      if (e.defaultPrevented || e.altKey) return;
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'p') {
        e.preventDefault();
        setDialog('goto');
        return;
      }
      if (e.ctrlKey || e.metaKey || typing(e.target) || dialog) return;
      if (e.key === 't') setDialog('goto');
      else if (e.key === '?') setDialog('keys');
      else if (e.key === 'y' && commit) {
        navigate({ ref: commit }, { replace: true, hash: location.hash });
      } else if ((e.key === 'h' || e.key === 'b') && route.path && !route.commit) {
        navigate({ view: e.key === 'h' ? 'history' : 'blame' });
      } else return;
      e.preventDefault();
    }
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [dialog, commit, route.path, route.commit]);

  return (
    <div class="repo-view">
      <section class="card repo-header">
        <div class="repo-title">
          <h2>{repo.name}</h2>
          {/* Read again as the history fill brings the other branches and tags. */}
          <RefSwitcher key={`${synced}-${fill?.stored ?? 0}`} repoId={repo.id} current={ref} />
          <SyncButtons repoId={repo.id} onUpdated={onSynced} />
          <button
            type="button"
            data-testid="open-working-tree"
            aria-pressed={writing}
            onClick={() => setWriting(!writing)}
          >
            {writing ? 'Close changes' : 'Edit & commit'}
          </button>
        </div>
        <p class="muted repo-url">{repo.url}</p>
        <p class="repo-meta muted">
          <span>{repo.filter ? `partial clone (${repo.filter})` : 'full clone'}</span>
          {repo.corsProxy && (
            <span data-testid="repo-proxy" title={`Reached through the CORS proxy at ${repo.corsProxy}`}>
              via {proxyHost(repo.corsProxy)}
            </span>
          )}
          {repo.shallow && fill?.status !== 'complete' && (
            <span>{fill && fill.status !== 'failed' ? 'shallow for now' : 'shallow'}</span>
          )}
        </p>
        <nav class="repo-tools" aria-label="Repository tools">
          <button
            type="button"
            class="secondary small"
            onClick={() => setDialog('goto')}
            title="Go to file (t)"
          >
            Go to file
          </button>
          <button
            type="button"
            class="secondary small"
            onClick={() =>
              navigate({
                compare: route.compare ?? `${repo.branch ?? 'HEAD'}...${ref}`,
                commit: null,
                path: '',
              })
            }
          >
            Compare
          </button>
          <button
            type="button"
            class="secondary small"
            onClick={() => setDialog('keys')}
            title="Keyboard shortcuts (?)"
          >
            Shortcuts
          </button>
        </nav>
      </section>
      {writing && (
        <WorkingTree
          repoId={repo.id}
          openPath={route.commit || route.compare || route.view ? '' : route.path}
          onCommitted={(branch) => {
            setVersion((v) => v + 1);
            if (branch && branch !== ref) navigate({ ref: branch, commit: null });
          }}
        />
      )}
      {/* The views that walk history read it again each time the fill stored more of it. */}
      <div class="repo-columns" key={`${version}-${synced}`}>
        {route.compare ? (
          <CompareView key={fill?.stored ?? 0} repoId={repo.id} spec={route.compare} />
        ) : route.commit ? (
          // Keyed by the fill's steps: a commit whose parent had not arrived shows its diff once it has.
          <CommitView key={fill?.stored ?? 0} repoId={repo.id} oid={route.commit} />
        ) : route.view === 'history' && route.path ? (
          <FileHistoryView key={fill?.stored ?? 0} repoId={repo.id} gitRef={ref} path={route.path} />
        ) : route.view === 'blame' && route.path ? (
          <BlameView key={fill?.stored ?? 0} repoId={repo.id} gitRef={ref} path={route.path} />
        ) : (
          <PathView
            repoId={repo.id}
            repoUrl={repo.url}
            gitRef={ref}
            path={route.path}
            commit={commit}
            grown={fill?.stored ?? 0}
          />
        )}
        <CommitList repoId={repo.id} gitRef={ref} selected={route.commit} grown={fill?.stored ?? 0} />
      </div>
      <StatusLine
        key={synced}
        repoId={repo.id}
        gitRef={ref}
        tick={`${route.path}|${route.commit ?? ''}`}
        fill={fill}
      />
      {dialog === 'goto' && <GoToFile repoId={repo.id} gitRef={ref} onClose={() => setDialog(null)} />}
      {dialog === 'keys' && <ShortcutSheet onClose={() => setDialog(null)} />}
    </div>
  );
}

/** A path is a folder or a file; which one is known only from the tree, so try the folder first. */
function PathView({
  repoId,
  repoUrl,
  gitRef,
  path,
  commit,
  grown,
}: {
  repoId: string;
  repoUrl: string;
  gitRef: string;
  path: string;
  commit?: string;
  grown: number;
}) {
  // The kind is kept with the path it was found for: on a new path the previous path's kind would render
  // its view (a FileView still holding the previous file) under the new path until the look-up answers.
  const lookedUp = `${repoId}\0${gitRef}\0${path}`;
  const [found, setFound] = useState<{ of: string; kind: 'dir' | 'file' } | null>(null);
  const kind = !path ? 'dir' : found?.of === lookedUp ? found.kind : null;
  useEffect(() => {
    if (!path) return;
    let current = true;
    const settle = (k: 'dir' | 'file') => {
      if (current) setFound({ of: lookedUp, kind: k });
    };
    gitClient
      .repo(repoId)
      .readTree({ ref: gitRef, path })
      .then(() => settle('dir'))
      // A tree git refuses is shown as the folder's error, not looked up again as a file.
      .catch((err: { code?: string }) => settle(err.code === 'HOSTILE_TREE' ? 'dir' : 'file'));
    return () => {
      current = false;
    };
  }, [lookedUp]);
  if (kind === null) return <section class="card muted">Opening {path}…</section>;
  return kind === 'dir' ? (
    <FileTree repoId={repoId} gitRef={gitRef} path={path} grown={grown} />
  ) : (
    <FileView repoId={repoId} repoUrl={repoUrl} gitRef={gitRef} path={path} commit={commit} />
  );
}

/** The proxy's host as a person reads it; the address as given if it is not a URL. */
function proxyHost(proxy: string): string {
  try {
    return new URL(proxy).host;
  } catch {
    return proxy;
  }
}
