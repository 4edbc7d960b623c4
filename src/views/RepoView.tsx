import { useEffect, useRef, useState } from 'preact/hooks';
import type { RepoSummary } from '../../workers/engine/index.ts';
import { focusIfLost } from '../focus.ts';
import { gitClient } from '../gitClient.ts';
import { useHistoryFill } from '../historyFill.ts';
import { lazyView } from '../lazyView.tsx';
import { askWhoIsBusy, useRepoActivity } from '../repoActivity.ts';
import { remoteKey } from '../repoUrl.ts';
import { navigate, parseRoute, type Route, routeHref } from '../route.ts';
import { CurrentRepo } from './currentRepo.ts';
import { FileTree } from './FileTree.tsx';
import { FileView } from './FileView.tsx';
import { OpenFromLink } from './OpenFromLink.tsx';
import { RefButton } from './RefButton.tsx';
import { StatusBar } from './StatusBar.tsx';
import { SyncButtons } from './SyncButtons.tsx';

// Everything a repository's first paint (its folder or a file) does not need comes when first shown.
const BlameView = lazyView(() => import('./BlameView.tsx').then((m) => m.BlameView));
const CommitList = lazyView(() => import('./CommitList.tsx').then((m) => m.CommitList));
const CommitView = lazyView(() => import('./CommitView.tsx').then((m) => m.CommitView));
const CompareView = lazyView(() => import('./CompareView.tsx').then((m) => m.CompareView));
const EditView = lazyView(() => import('./EditView.tsx').then((m) => m.EditView));
const FileHistoryView = lazyView(() => import('./FileHistoryView.tsx').then((m) => m.FileHistoryView));
const GoToFile = lazyView(() => import('./GoToFile.tsx').then((m) => m.GoToFile));
const LineDialog = lazyView(() => import('./LineDialog.tsx').then((m) => m.LineDialog));
const ShortcutSheet = lazyView(() => import('./ShortcutSheet.tsx').then((m) => m.ShortcutSheet));
const WorkingTree = lazyView(() => import('./WorkingTree.tsx').then((m) => m.WorkingTree));

/** The stored repo an address names: by its remote URL (the newest clone of it), or by an old link's id. */
function findRepo(all: RepoSummary[], key: string): RepoSummary | null {
  const byId = all.find((r) => r.id === key);
  if (byId) return byId;
  const wanted = remoteKey(key);
  const same = all.filter((r) => remoteKey(r.url) === wanted);
  return same.sort((a, b) => b.lastFetchedAt - a.lastFetchedAt)[0] ?? null;
}

/**
 * `?repo=` holds the remote's URL: the repo stored for it opens, and one this browser does not have is
 * cloned first (without blobs). An address with a stored repo's id (older links) opens it too, and is
 * rewritten to the URL, so whatever is copied from the address bar works in any browser.
 */
export function RepoView({ route }: { route: Route }) {
  const [repo, setRepo] = useState<RepoSummary | null | undefined>(undefined);
  // Bumped after a fetch or pull, so every part of the view reads the repo again.
  const [synced, setSynced] = useState(0);
  const key = route.repo!;
  const activity = useRepoActivity();
  // Another tab committed a change to this repo (a checkout, a fetch): read it again, without a reload.
  const changes = activity.changes.get(repo?.id ?? key) ?? 0;
  useEffect(() => {
    setRepo((r) => (r && (r.id === key || remoteKey(r.url) === remoteKey(key)) ? r : undefined));
    gitClient.listRepos().then((all) => setRepo(findRepo(all, key)));
  }, [key, changes, synced]);
  useEffect(() => {
    if (repo) askWhoIsBusy(repo.id);
    if (repo && repo.id === key)
      navigate({ ...parseRoute(location.search), repo: repo.url }, { replace: true, hash: location.hash });
  }, [repo?.id, key]);

  if (repo === undefined) return <p class="muted">Opening…</p>;
  if (repo === null) {
    if (/^https?:\/\//.test(key)) return <OpenFromLink url={key} gitRef={route.ref} onReady={setRepo} />;
    return (
      <section class="card">
        <h1>Not in this browser</h1>
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
      <CurrentRepo.Provider value={repo}>
        <StoredRepoView
          key={changes}
          repo={repo}
          route={route}
          gitRef={ref}
          synced={synced}
          onSynced={() => setSynced((n) => n + 1)}
        />
      </CurrentRepo.Provider>
    </>
  );
}

/** Whether a key goes into a field. The editor sits in a shadow root: the event's own target is inside it. */
function typing(e: KeyboardEvent): boolean {
  const el = (e.composedPath()[0] ?? e.target) as HTMLElement | null;
  return !!el && (el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName));
}

type Tab = 'code' | 'history' | 'compare' | 'changes';

function tabOf(route: Route): Tab {
  if (route.compare) return 'compare';
  if (route.view === 'changes') return 'changes';
  if ((route.view === 'history' && !route.path) || route.commit) return 'history';
  return 'code';
}

function StoredRepoView({
  repo,
  route,
  gitRef: ref,
  synced,
  onSynced,
}: {
  repo: RepoSummary;
  route: Route;
  gitRef: string;
  /** Bumped after each fetch or pull: the parts keyed on it read the repo again. */
  synced: number;
  onSynced: () => void;
}) {
  const [dialog, setDialog] = useState<'goto' | 'keys' | 'lines' | null>(null);
  // Bumped by a commit or a branch switch from the working tree, so the views read the new HEAD.
  const [version, setVersion] = useState(0);
  // The commit the ref names now: what permalinks and `y` put in the address.
  const [commit, setCommit] = useState<string | undefined>(undefined);
  // A first-view clone's history, branches and tags arrive in the background while the repo is shown.
  const fill = useHistoryFill(repo);
  const grown = fill?.stored ?? 0;
  const opener = useRef<HTMLElement | null>(null);
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

  const fileShown = !!route.path && !route.commit && !route.compare;
  useEffect(() => {
    function onKey(e: KeyboardEvent) {
      if (e.defaultPrevented || e.altKey) return;
      const open = (d: typeof dialog) => {
        opener.current = document.activeElement as HTMLElement | null;
        setDialog(d);
      };
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'p') {
        e.preventDefault();
        open('goto');
        return;
      }
      if (e.ctrlKey || e.metaKey || typing(e) || dialog) return;
      if (e.key === 't') open('goto');
      else if (e.key === '?') open('keys');
      else if (e.key === 'l' && fileShown && !route.view) open('lines');
      else if (e.key === 'y' && commit) {
        navigate({ ref: commit }, { replace: true, hash: location.hash });
      } else if ((e.key === 'h' || e.key === 'b') && fileShown) {
        navigate({ view: e.key === 'h' ? 'history' : 'blame' });
      } else return;
      e.preventDefault();
    }
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [dialog, commit, route.path, route.commit, route.view, fileShown]);

  // A dialog closed gives focus back to what opened it, when that is still there.
  const closeDialog = () => {
    setDialog(null);
    const back = opener.current;
    opener.current = null;
    requestAnimationFrame(() => back?.isConnected && back.focus());
  };

  const tab = tabOf(route);
  const tabs: { id: Tab; label: string; to: Partial<Route> }[] = [
    { id: 'code', label: 'Code', to: { path: '', commit: null } },
    { id: 'history', label: 'History', to: { path: '', commit: null, view: 'history' } },
    // An empty base: the comparison view picks one (the default branch, or the latest tag).
    {
      id: 'compare',
      label: 'Compare',
      to: { path: '', commit: null, compare: route.compare ?? `...${ref}` },
    },
    { id: 'changes', label: 'Changes', to: { path: '', commit: null, view: 'changes' } },
  ];

  return (
    <div class="repo-view" data-repo-id={repo.id}>
      <section class="repo-header" aria-label="Repository">
        <div class="repo-title">
          <h1>{repo.name}</h1>
          {/* Read again as the history fill brings the other branches and tags. */}
          <RefButton repo={repo} current={ref} grown={`${synced}-${grown}`} />
          <SyncButtons repoId={repo.id} onUpdated={onSynced} />
        </div>
        <p class="muted repo-url">
          {repo.url}
          <span class="repo-meta">
            <span>{repo.filter ? `partial clone (${repo.filter})` : 'full clone'}</span>
            {repo.corsProxy && (
              <span data-testid="repo-proxy" title={`Reached through the CORS proxy at ${repo.corsProxy}`}>
                via {proxyHost(repo.corsProxy)}
              </span>
            )}
            {repo.shallow && fill?.status !== 'complete' && (
              <span>{fill && fill.status !== 'failed' ? 'shallow for now' : 'shallow'}</span>
            )}
          </span>
        </p>
      </section>
      <nav class="repo-tabs" aria-label="Repository views">
        {tabs.map((t) => (
          <a
            key={t.id}
            href={routeHref(t.to)}
            class="tab"
            data-testid={t.id === 'changes' ? 'open-working-tree' : `tab-${t.id}`}
            aria-current={tab === t.id ? 'page' : undefined}
            onClick={(e) => {
              if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
              e.preventDefault();
              navigate(t.to);
            }}
          >
            {t.label}
          </a>
        ))}
        <span class="tab-tools">
          <button
            type="button"
            class="secondary small"
            onClick={() => {
              opener.current = document.activeElement as HTMLElement | null;
              setDialog('goto');
            }}
            onMouseEnter={GoToFile.preload}
            title="Go to file (t)"
          >
            Go to file
          </button>
          <button
            type="button"
            class="secondary small shortcuts-button"
            onClick={() => {
              opener.current = document.activeElement as HTMLElement | null;
              setDialog('keys');
            }}
            title="Keyboard shortcuts (?)"
          >
            Shortcuts
          </button>
        </span>
      </nav>
      {/* The views that walk history read it again each time the fill stored more of it. */}
      {/* The working tree keeps its own state (a notice, a result) through the commits it makes itself. */}
      <div class="repo-content" key={route.view === 'changes' ? `changes-${synced}` : `${version}-${synced}`}>
        {route.compare ? (
          <CompareView key={grown} repoId={repo.id} spec={route.compare} />
        ) : route.commit ? (
          // Not keyed by the fill's steps, as the others are: it reads its list again in place, so a file
          // opened in it stays open while the history arrives.
          <CommitView repoId={repo.id} oid={route.commit} grown={grown} />
        ) : route.view === 'changes' ? (
          <WorkingTree
            repoId={repo.id}
            onCommitted={(branch) => {
              setVersion((v) => v + 1);
              if (branch && branch !== ref) navigate({ ref: branch, commit: null, view: 'changes' });
            }}
          />
        ) : route.view === 'history' && !route.path ? (
          <CommitList repoId={repo.id} gitRef={ref} selected={null} grown={grown} />
        ) : route.view === 'history' ? (
          <FileHistoryView key={grown} repoId={repo.id} gitRef={ref} path={route.path} />
        ) : route.view === 'blame' && route.path ? (
          <BlameView key={grown} repoId={repo.id} gitRef={ref} path={route.path} />
        ) : route.view === 'edit' && route.path ? (
          <EditView repoId={repo.id} gitRef={ref} path={route.path} />
        ) : (
          <PathView
            repoId={repo.id}
            repoUrl={repo.url}
            gitRef={ref}
            path={route.path}
            commit={commit}
            grown={grown}
          />
        )}
      </div>
      <StatusBar
        key={synced}
        repo={repo}
        gitRef={ref}
        tick={`${route.path}|${route.commit ?? ''}`}
        fill={fill}
      />
      {dialog === 'goto' && <GoToFile repoId={repo.id} gitRef={ref} onClose={closeDialog} />}
      {dialog === 'keys' && <ShortcutSheet onClose={closeDialog} />}
      {dialog === 'lines' && <LineDialog onClose={closeDialog} />}
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
  const opening = useRef<HTMLElement>(null);
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
  useEffect(() => focusIfLost(opening.current), [kind === null]);
  if (kind === null)
    return (
      <section class="card muted" ref={opening} tabIndex={-1}>
        Opening {path}…
      </section>
    );
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
