import { useRoute } from './route.ts';
import { Home } from './views/Home.tsx';
import { RepoView } from './views/RepoView.tsx';

export function App() {
  const route = useRoute();
  return (
    <>
      <header class="topbar">
        <a href="./" class="brand" aria-label="Blobless home">
          Blobless
        </a>
        <span class="tagline">git in the browser, without the blobs</span>
      </header>
      <main>{route.repo ? <RepoView route={route} /> : <Home />}</main>
    </>
  );
}
