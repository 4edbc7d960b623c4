import { VitePWA } from 'vite-plugin-pwa';

/** The light and dark colours of the app's top bar (src/styles.css): the installed window's title bar. */
export const THEME = { light: '#ffffff', dark: '#171b22', background: '#f6f7f9' };

/**
 * The installable, offline app: the web app manifest and a Workbox service worker (generateSW) that
 * precaches every built file, so a reload with no network still starts the app, its git worker and its
 * lazily loaded chunks. Git requests go to other origins and match no route: they never touch the cache.
 */
export function pwa() {
  return VitePWA({
    // A new version waits until the person reloads (src/views/UpdatePrompt.tsx): a reload in the middle of
    // a clone would lose it.
    registerType: 'prompt',
    // Registered from src/main.tsx through the virtual module; no inline script, so a strict CSP holds.
    injectRegister: false,
    strategies: 'generateSW',
    filename: 'sw.js',
    manifestFilename: 'manifest.webmanifest',
    // globPatterns below already takes every icon; listing them twice would only repeat precache entries.
    includeManifestIcons: false,
    manifest: {
      id: './',
      name: 'Blobless: git in the browser',
      short_name: 'Blobless',
      description:
        'A git client in the browser: partial clones over smart HTTP, kept in this browser, readable offline.',
      start_url: './',
      scope: './',
      display: 'standalone',
      theme_color: THEME.light,
      background_color: THEME.background,
      categories: ['developer', 'productivity', 'utilities'],
      icons: [
        { src: 'icons/icon-192.png', sizes: '192x192', type: 'image/png', purpose: 'any' },
        { src: 'icons/icon-512.png', sizes: '512x512', type: 'image/png', purpose: 'any' },
        { src: 'icons/icon-maskable-192.png', sizes: '192x192', type: 'image/png', purpose: 'maskable' },
        { src: 'icons/icon-maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
      ],
    },
    workbox: {
      // Every entry (index.html and any other, such as a widget's), the git worker with its inlined wasm,
      // the highlighter and any other lazy chunk, the icons (the plugin adds the manifest itself). Source
      // maps stay out: only devtools wants them.
      globPatterns: ['**/*.{html,js,css,wasm,svg,png}'],
      // The app's address carries its state in the query (?repo=…&path=…): any query still means index.html.
      ignoreURLParametersMatching: [/.*/],
      navigateFallback: 'index.html',
      cleanupOutdatedCaches: true,
      // The first visit is offline-ready without a reload; an update still waits for the prompt.
      clientsClaim: true,
      runtimeCaching: [
        {
          // Which CORS proxy to fall back on: fresh when online, the last answer offline.
          urlPattern: ({ url, sameOrigin }) => sameOrigin && url.pathname.endsWith('/config.json'),
          handler: 'NetworkFirst',
          options: {
            cacheName: 'blobless-config',
            networkTimeoutSeconds: 3,
            cacheableResponse: { statuses: [200] },
          },
        },
        {
          // Hashed build files not in the precache (an old version's lazy chunk, a highlighter language
          // split out later): immutable by name, so the first copy fetched serves for ever.
          urlPattern: ({ url, sameOrigin }) => sameOrigin && url.pathname.includes('/assets/'),
          handler: 'CacheFirst',
          options: {
            cacheName: 'blobless-assets',
            expiration: { maxEntries: 200 },
            cacheableResponse: { statuses: [200] },
          },
        },
      ],
    },
    // `npm run dev` registers no service worker: a cache between the editor and the page only confuses.
    devOptions: { enabled: false },
  });
}
