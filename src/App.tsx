import { useInstall } from './install.ts';
import { useOnline } from './online.ts';
import { useRoute } from './route.ts';
import { Home } from './views/Home.tsx';
import { RepairNotice } from './views/RepairNotice.tsx';
import { RepoView } from './views/RepoView.tsx';
import { UpdatePrompt } from './views/UpdatePrompt.tsx';

export function App() {
  const route = useRoute();
  const online = useOnline();
  const install = useInstall();
  return (
    <>
      {/* The first tab stop: past the bar, to the page's content. */}
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a href="./" class="brand" aria-label="Blobless home">
          Blobless
        </a>
        <span class="tagline">git in the browser, without the blobs</span>
        <span class="topbar-end">
          {!online && (
            <span
              class="offline-badge"
              role="status"
              data-testid="offline-badge"
              title="Stored repositories and the files already fetched open; cloning and fetching wait for the network."
            >
              Offline
            </span>
          )}
          {install && (
            <button
              type="button"
              class="secondary small"
              data-testid="install"
              title="Install Blobless as an app: its own window, and it starts without a network"
              onClick={() => void install()}
            >
              Install
            </button>
          )}
        </span>
      </header>
      <UpdatePrompt />
      <RepairNotice />
      <main id="main" tabIndex={-1}>
        {route.repo ? <RepoView route={route} /> : <Home />}
      </main>
    </>
  );
}
