import './bufferPolyfill.ts';
import * as Comlink from 'comlink';
import { embedApi } from './embedApi.ts';
import { installTransferHandlers } from './rpc.ts';

installTransferHandlers();
Comlink.expose(embedApi);
