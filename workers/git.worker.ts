import './bufferPolyfill.ts';
import * as Comlink from 'comlink';
import { api } from './api.ts';
import { installTransferHandlers, releasingSignals } from './rpc.ts';

installTransferHandlers();
Comlink.expose(releasingSignals(api));
