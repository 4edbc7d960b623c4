import './bufferPolyfill.ts';
import * as Comlink from 'comlink';
import { embedApi } from './embedApi.ts';
import { installTransferHandlers } from './rpc.ts';
import { ensureStorage } from './storageFallback.ts';

installTransferHandlers();
// A widget is often a cross-site iframe, where the browser may refuse it storage.
const storage = ensureStorage();
Comlink.expose({
  ...embedApi,
  async readFileMinimal(...args: Parameters<typeof embedApi.readFileMinimal>) {
    await storage;
    return embedApi.readFileMinimal(...args);
  },
  storage: () => storage,
});
