// The worker code runs in browsers; under Node the tests give it IndexedDB (fake-indexeddb) and the
// `navigator` that lightning-fs looks at for Web Locks (absent here, so it uses its IndexedDB mutex).
import 'fake-indexeddb/auto';

const g = globalThis as { navigator?: unknown };
g.navigator ??= {};
