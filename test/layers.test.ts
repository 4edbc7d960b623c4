// The layering docs/ARCHITECTURE.md promises, checked on the source with TypeScript's own
// parser: each layer of workers/ imports only the layers before it (the pure ones only model and pure layers
// before them), the folders of ops/ import each other without a cycle, src/ takes from workers/ only the
// engine's public entries (values from engine/client.ts, types from it and engine/index.ts), and no module
// imports itself back through others, not even for types.
//
// An import is every `import … from`, `export … from`, side-effect `import './x'`, `import x = require()`,
// dynamic `import('./x')` and `typeof import('./x')`. A statement is type-only if it says `import type` /
// `export type`, or every name it lists is marked `type`. `new URL('./x.ts', import.meta.url)` (a worker's
// script) is not an import: the worker runs in its own realm.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');

/** The layers, lowest first. A pure layer imports only `model` and the pure layers before it. */
const LAYERS: readonly { name: string; pure: boolean }[] = [
  { name: 'model', pure: true },
  { name: 'wire', pure: true },
  { name: 'transport', pure: false },
  { name: 'pack', pure: true },
  { name: 'diff', pure: true },
  { name: 'commitgraph', pure: true },
  { name: 'store', pure: false },
  // The storage implementations (IndexedDB, memory) of store/storage.ts's interface.
  { name: 'storage', pure: false },
  { name: 'ops', pure: false },
  // createEngine, its public types and errors, and the comlink adapter (worker.ts, client.ts).
  { name: 'engine', pure: false },
  // The files directly in workers/: the worker entries and what only they use.
  { name: 'entries', pure: false },
  { name: 'src', pure: false },
];

/** What src/ may import from workers/ as values: the page's side of the engine, which holds no git code. */
const UI_MAY_IMPORT_VALUES_FROM: readonly string[] = ['workers/engine/client.ts'];

/** What src/ may import types from: the public entries (the package's `blobless` and `blobless/client`). */
const UI_MAY_IMPORT_TYPES_FROM: readonly string[] = ['workers/engine/index.ts', 'workers/engine/client.ts'];

interface Import {
  /** The importing file and the imported one, as paths from the repository root. */
  from: string;
  to: string;
  typeOnly: boolean;
  how: 'import' | 'side-effect import' | 're-export' | 'dynamic import' | 'require';
}

function resolveSpecifier(from: string, spec: string, exists: (path: string) => boolean): string | null {
  if (!spec.startsWith('.')) return null; // a package
  const base = posix.normalize(posix.join(posix.dirname(from), spec));
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`]) {
    if (exists(candidate)) return candidate;
  }
  return base;
}

/** Every import of one file, judged per statement. */
function importsOf(path: string, text: string, exists: (path: string) => boolean): Import[] {
  const kind = path.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind);
  const found: Import[] = [];
  const add = (spec: ts.Expression | undefined, typeOnly: boolean, how: Import['how']) => {
    if (!spec || !ts.isStringLiteralLike(spec)) return;
    const to = resolveSpecifier(path, spec.text, exists);
    if (to !== null) found.push({ from: path, to, typeOnly, how });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      if (!clause) add(node.moduleSpecifier, false, 'side-effect import');
      else {
        const named = clause.namedBindings;
        const everyNameIsType =
          !clause.name &&
          named !== undefined &&
          ts.isNamedImports(named) &&
          named.elements.length > 0 &&
          named.elements.every((e) => e.isTypeOnly);
        add(node.moduleSpecifier, clause.isTypeOnly || everyNameIsType, 'import');
      }
    } else if (ts.isExportDeclaration(node)) {
      const named = node.exportClause;
      const everyNameIsType =
        named !== undefined &&
        ts.isNamedExports(named) &&
        named.elements.length > 0 &&
        named.elements.every((e) => e.isTypeOnly);
      add(node.moduleSpecifier, node.isTypeOnly || everyNameIsType, 're-export');
    } else if (ts.isImportEqualsDeclaration(node)) {
      const ref = node.moduleReference;
      if (ts.isExternalModuleReference(ref)) add(ref.expression, node.isTypeOnly, 'require');
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], false, 'dynamic import');
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument;
      if (ts.isLiteralTypeNode(arg)) add(arg.literal, true, 'dynamic import');
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The layer of a path from the repository root: an index into LAYERS, 'unknown' in workers/, or null. */
function layerOf(path: string): number | 'unknown' | null {
  if (path.startsWith('src/')) return LAYERS.findIndex((l) => l.name === 'src');
  const m = /^workers\/(?:([^/]+)\/)?[^/]+$|^workers\/([^/]+)\//.exec(path);
  if (!m) return null;
  const folder = m[2] ?? m[1];
  const name = folder ?? 'entries';
  const i = LAYERS.findIndex((l) => l.name === name);
  return i >= 0 ? i : 'unknown';
}

const opsFolderOf = (path: string) => /^workers\/ops\/([^/]+)\//.exec(path)?.[1] ?? null;

function cyclesOf(graph: Map<string, string[]>): string[] {
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next].join(' -> '));
      else if (!state.has(next) && graph.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return cycles;
}

interface LayerReport {
  /** Imports of a layer above, of an impure layer by a pure one, or from outside workers/ and src/. */
  upward: string[];
  /** Files of workers/ in no layer. */
  unknown: string[];
  /** What src/ takes from workers/ other than the engine's page side (values) and public entries (types). */
  uiValues: string[];
  /** Cycles between files, types included. */
  cycles: string[];
  /** Cycles between the folders of ops/, types included. */
  opsFolderCycles: string[];
}

/** Checks the files given (paths from the repository root to their text). */
function checkLayers(files: ReadonlyMap<string, string>): LayerReport {
  const exists = (p: string) => files.has(p);
  const report: LayerReport = { upward: [], unknown: [], uiValues: [], cycles: [], opsFolderCycles: [] };
  const graph = new Map<string, string[]>();
  const opsGraph = new Map<string, string[]>();
  for (const [path, text] of files) {
    const imports = importsOf(path, text, exists);
    graph.set(
      path,
      imports.map((i) => i.to),
    );
    const layer = layerOf(path);
    if (layer === 'unknown') report.unknown.push(path);
    if (layer === null || layer === 'unknown') continue;
    for (const i of imports) {
      const what = `${path} -> ${i.to} (${i.typeOnly ? 'type-only ' : ''}${i.how})`;
      const target = layerOf(i.to);
      if (target === null) {
        report.upward.push(`${what}: outside workers/ and src/`);
        continue;
      }
      if (target === 'unknown') continue; // reported as the target's own file
      const mine = LAYERS[layer];
      if (mine.name === 'src') {
        const allowed = i.typeOnly ? UI_MAY_IMPORT_TYPES_FROM : UI_MAY_IMPORT_VALUES_FROM;
        if (i.to.startsWith('workers/') && !allowed.includes(i.to)) report.uiValues.push(what);
        continue;
      }
      if (target > layer) report.upward.push(`${what}: ${mine.name} may not import ${LAYERS[target].name}`);
      else if (mine.pure && !LAYERS[target].pure)
        report.upward.push(`${what}: ${mine.name} is pure and may not import ${LAYERS[target].name}`);
      const a = opsFolderOf(path);
      const b = opsFolderOf(i.to);
      if (a && b && a !== b) {
        const edges = opsGraph.get(a) ?? [];
        if (!edges.includes(b)) edges.push(b);
        opsGraph.set(a, edges);
        if (!opsGraph.has(b)) opsGraph.set(b, []);
      }
    }
  }
  report.cycles = cyclesOf(graph);
  report.opsFolderCycles = cyclesOf(opsGraph);
  return report;
}

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

const repoFiles = new Map(
  [...sources(join(root, 'workers')), ...sources(join(root, 'src'))].map((f) => [
    relative(root, f),
    readFileSync(f, 'utf8'),
  ]),
);
const report = checkLayers(repoFiles);

describe('layers', () => {
  it('reads the whole tree', () => {
    expect(repoFiles.size).toBeGreaterThan(150);
    expect(repoFiles.has('workers/model/objectId.ts')).toBe(true);
    expect(report.unknown).toEqual([]);
  });

  it('each layer of workers/ imports only the layers before it; pure ones only model and pure ones', () => {
    expect(report.upward).toEqual([]);
  });

  it('the folders of ops/ import each other without a cycle', () => {
    expect(report.opsFolderCycles).toEqual([]);
  });

  it("src/ takes from workers/ only the engine's public entries: values from client.ts, types from index.ts too", () => {
    expect(report.uiValues).toEqual([]);
  });

  it('no module imports itself back, types included', () => {
    expect(report.cycles).toEqual([]);
  });
});

describe('the layer check catches each break', () => {
  const check = (files: Record<string, string>) => checkLayers(new Map(Object.entries(files)));

  it('a side-effect import of a layer above', () => {
    const r = check({
      'workers/store/gitDir.ts': "import '../ops/sync/pull.ts';\n",
      'workers/ops/sync/pull.ts': 'export const pull = 1;\n',
    });
    expect(r.upward).toEqual([
      'workers/store/gitDir.ts -> workers/ops/sync/pull.ts (side-effect import): store may not import ops',
    ]);
  });

  it('a dynamic import of a layer above, and a type-only one (types count as imports here)', () => {
    const r = check({
      'workers/pack/a.ts':
        "export async function f() { return import('../store/b.ts'); }\nexport type T = typeof import('../ops/c.ts');\n",
      'workers/store/b.ts': 'export const b = 1;\n',
      'workers/ops/c.ts': 'export const c = 1;\n',
    });
    expect(r.upward).toEqual([
      'workers/pack/a.ts -> workers/store/b.ts (dynamic import): pack may not import store',
      'workers/pack/a.ts -> workers/ops/c.ts (type-only dynamic import): pack may not import ops',
    ]);
  });

  it('a pure layer importing an impure one below it', () => {
    const r = check({
      'workers/pack/a.ts':
        "import { get } from '../transport/http.ts';\nimport { id } from '../model/id.ts';\n",
      'workers/transport/http.ts': 'export const get = 1;\n',
      'workers/model/id.ts': 'export const id = 1;\n',
    });
    expect(r.upward).toEqual([
      'workers/pack/a.ts -> workers/transport/http.ts (import): pack is pure and may not import transport',
    ]);
  });

  it('in src/, a value from anywhere but engine/client.ts, a type from anywhere but the public entries', () => {
    const r = check({
      'src/view.ts': [
        "import type { Engine } from '../workers/engine/index.ts';",
        "import { type CloneResult, type Repo } from '../workers/engine/index.ts';",
        "export type { Engine as E } from '../workers/engine/client.ts';",
        "import { wrapEngine } from '../workers/engine/client.ts';",
        "import { createEngine } from '../workers/engine/index.ts';",
        "import { type Other, more } from '../workers/other.ts';",
        "import type { OpsContext } from '../workers/ops/common/engineContext.ts';",
        "export { wrapEngine as w } from '../workers/engine/index.ts';",
        "const w = new Worker(new URL('../workers/git.worker.ts', import.meta.url), { type: 'module' });",
      ].join('\n'),
      'workers/engine/index.ts': 'export const createEngine = 1;\nexport const wrapEngine = 1;\n',
      'workers/engine/client.ts': 'export const wrapEngine = 1;\n',
      'workers/other.ts': 'export const more = 1;\n',
      'workers/ops/common/engineContext.ts': 'export interface OpsContext {}\n',
      'workers/git.worker.ts': 'export {};\n',
    });
    expect(r.uiValues).toEqual([
      'src/view.ts -> workers/engine/index.ts (import)',
      'src/view.ts -> workers/other.ts (import)',
      'src/view.ts -> workers/ops/common/engineContext.ts (type-only import)',
      'src/view.ts -> workers/engine/index.ts (re-export)',
    ]);
  });

  it('a cycle of type-only imports', () => {
    const r = check({
      'workers/model/a.ts': "import type { B } from './b.ts';\nexport interface A { b: B }\n",
      'workers/model/b.ts': "import { type A } from './a.ts';\nexport interface B { a: A }\n",
    });
    expect(r.cycles).toEqual(['workers/model/a.ts -> workers/model/b.ts -> workers/model/a.ts']);
  });

  it('two folders of ops/ that import each other, and a file in no layer', () => {
    const r = check({
      'workers/ops/sync/fetch.ts': "import type { Tree } from '../read/tree.ts';\n",
      'workers/ops/read/tree.ts': "import { fetchRepo } from '../sync/lazy.ts';\n",
      'workers/ops/sync/lazy.ts': 'export const fetchRepo = 1;\n',
      'workers/misc/x.ts': 'export {};\n',
    });
    expect(r.opsFolderCycles).toEqual(['sync -> read -> sync']);
    expect(r.cycles).toEqual([]);
    expect(r.unknown).toEqual(['workers/misc/x.ts']);
  });
});
