import './bufferPolyfill.ts';
import * as Comlink from 'comlink';
import { api } from './api.ts';
import { installTransferHandlers } from './rpc.ts';

installTransferHandlers();
Comlink.expose(api);
