import { Buffer } from 'buffer';

// isomorphic-git uses Node's Buffer; browsers do not have it. Imported first by the worker entry.
const g = globalThis as { Buffer?: typeof Buffer };
g.Buffer ??= Buffer;
