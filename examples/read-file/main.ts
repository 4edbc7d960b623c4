import { wrapEngine } from 'blobless/client';

// Which file of which repository: ?repo=<clone URL>&path=<file>, and &ref=<branch, tag or commit> if not HEAD.
const params = new URLSearchParams(location.search);
const out = document.getElementById('file') as HTMLElement;

// The engine runs in a worker; the page holds no git code, only the engine's typed stub.
const engine = wrapEngine(new Worker(new URL('./engine.worker.ts', import.meta.url), { type: 'module' }));
try {
  // The minimal read: the ref, its commit at depth 1, the trees on the path and the one blob; no clone.
  const read = await engine.readFileMinimal({
    url: params.get('repo') ?? '',
    path: params.get('path') ?? 'README.md',
    ref: params.get('ref') ?? undefined,
  });
  out.textContent = read.file ? new TextDecoder().decode(read.file.bytes) : `${read.path}/ is a folder`;
} catch (err) {
  // Errors arrive from the worker as the engine's classes, with their codes.
  const { code, message } = err as { code?: string; message: string };
  out.textContent = `${code ?? 'ERROR'}: ${message}`;
}
