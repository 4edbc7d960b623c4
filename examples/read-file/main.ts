import { wrapEngine } from 'blobless/client';

// Which file of which repository: ?repo=<clone URL>&path=<file>, and &ref=<branch, tag or commit> if not HEAD.
const params = new URLSearchParams(location.search);
const out = document.getElementById('file') as HTMLElement;

// The engine runs in a worker; the page holds no git code, only the engine's typed stub.
const engine = wrapEngine(new Worker(new URL('./engine.worker.ts', import.meta.url), { type: 'module' }));
try {
  const file = await engine.readFileMinimal({
    url: params.get('repo') ?? '',
    path: params.get('path') ?? 'README.md',
    ref: params.get('ref') ?? undefined,
  });
  out.textContent = new TextDecoder().decode(file.bytes);
} catch (err) {
  out.textContent = `Could not read it: ${(err as Error).message}`;
}
