import { useOnline } from './online.ts';
import { useRoute } from './route.ts';
import { Home } from './views/Home.tsx';
import { RepairNotice } from './views/RepairNotice.tsx';
import { RepoView } from './views/RepoView.tsx';
import { UpdatePrompt } from './views/UpdatePrompt.tsx';

export function App() {
  const route = useRoute();
  const online = useOnline();
  return (
    <>
      <header class="topbar">
        <a href="./" class="brand" aria-label="Blobless home">
          Blobless
        </a>
        <span class="tagline">git in the browser, without the blobs</span>
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
      </header>
      <UpdatePrompt />
      <RepairNotice />
      <main>{route.repo ? <RepoView route={route} /> : <Home />}</main>
    </>
  );
}
