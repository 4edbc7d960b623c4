// The layering docs/ARCHITECTURE.md promises, checked on the source: each layer of workers/ imports only
// the layers before it, src/ imports nothing of workers/ but the API's types and rpc.ts, and no module
// imports itself back through others, not even for types.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
const LAYERS = ['wire', 'transport', 'pack', 'diff', 'commitgraph', 'store', 'ops'] as const;

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== 'testing' && name !== 'node_modules') out.push(...sources(path));
    } else if (/\.tsx?$/.test(name) && !/\.(test|bench)\.tsx?$/.test(name) && !name.endsWith('.d.ts'))
      out.push(path);
  }
  return out;
}

/** Every relative module a file imports or re-exports, types included, as paths from the repo root. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+['"](\.[^'"]+)['"]/g)) {
    found.push(relative(root, resolve(dirname(file), m[1])));
  }
  for (const m of text.matchAll(/import\(\s*['"](\.[^'"]+)['"]\s*\)/g))
    found.push(relative(root, resolve(dirname(file), m[1])));
  return found;
}

function layerOf(path: string): number {
  const m = /^workers\/([^/]+)\//.exec(path);
  if (m) {
    const i = LAYERS.indexOf(m[1] as (typeof LAYERS)[number]);
    if (i >= 0) return i;
  }
  if (path.startsWith('workers/')) return LAYERS.length; // api.ts, rpc.ts, the worker entry
  return LAYERS.length + 1; // src/
}

const files = [...sources(join(root, 'workers')), ...sources(join(root, 'src'))].map((f) =>
  relative(root, f),
);
const graph = new Map(files.map((f) => [f, importsOf(join(root, f))]));

describe('layers', () => {
  it('each layer of workers/ imports only the layers before it', () => {
    const upward: string[] = [];
    for (const [file, deps] of graph) {
      if (!file.startsWith('workers/')) continue;
      for (const dep of deps) if (layerOf(dep) > layerOf(file)) upward.push(`${file} -> ${dep}`);
    }
    expect(upward).toEqual([]);
  });

  it('src/ takes nothing from workers/ but types and rpc.ts', () => {
    const wrong: string[] = [];
    for (const [file, deps] of graph) {
      if (!file.startsWith('src/')) continue;
      const text = readFileSync(join(root, file), 'utf8');
      for (const dep of deps) {
        if (!dep.startsWith('workers/') || dep === 'workers/rpc.ts') continue;
        // A worker's URL (new Worker(new URL(...))) is not an import; a type-only import carries no code.
        const spec = relative(dirname(join(root, file)), join(root, dep));
        const typeOnly = new RegExp(
          `import type [^;]*from ['"]\\.?\\.?/?${spec.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}['"]`,
        );
        if (!typeOnly.test(text)) wrong.push(`${file} -> ${dep}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('no module imports itself back, types included', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (file: string) => {
      state.set(file, 'open');
      stack.push(file);
      for (const dep of graph.get(file) ?? []) {
        if (state.get(dep) === 'open') cycles.push([...stack.slice(stack.indexOf(dep)), dep].join(' -> '));
        else if (!state.has(dep) && graph.has(dep)) visit(dep);
      }
      stack.pop();
      state.set(file, 'done');
    };
    for (const file of graph.keys()) if (!state.has(file)) visit(file);
    expect(cycles).toEqual([]);
  });
});
