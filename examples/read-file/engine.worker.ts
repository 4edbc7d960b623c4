import { createEngine } from 'blobless';
import { exposeEngine } from 'blobless/worker';

exposeEngine(createEngine());
