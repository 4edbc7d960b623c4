// The package as its users get it: built, packed once, checked by publint and attw, then installed from the
// tarball into a project outside the repository, where its examples run against the test git server: the
// Node example under node, the page example in Chromium. `npm run test:package` runs this file alone.
import { execFile } from 'node:child_process';
import { cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { chromium } from '@playwright/test';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import ts from 'typescript';
import { preview, build as viteBuild } from 'vite';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { chromiumLaunch } from '../e2e/chromium.ts';
import { apiDocsDir, generateApiDocsToTemp } from '../packages/blobless/apiDocs.ts';
import { buildLibrary } from '../packages/blobless/build.ts';
import {
  distDir,
  entryPoints,
  packageDir,
  readManifest,
  repoRoot,
} from '../packages/blobless/entryPoints.ts';
import { git } from './support/git.ts';
import { useTmpDir } from './support/tmpDir.ts';

const run = promisify(execFile);
const bin = (name: string) => join(repoRoot, 'node_modules/.bin', name);

/** Runs a command; on failure, the error says what it printed. */
async function command(file: string, args: string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await run(file, args, { cwd, maxBuffer: 64 << 20, encoding: 'utf8' });
    return stdout;
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`${file} ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

/** The package names a module imports (`@scope/name/sub` → `@scope/name`), with the statements' texts. */
function importedPackages(source: ts.SourceFile): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    let spec: ts.Node | undefined;
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) spec = node.moduleSpecifier;
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) spec = node.argument.literal;
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      spec = node.arguments[0];
    if (spec && ts.isStringLiteral(spec) && !spec.text.startsWith('.')) {
      const parts = spec.text.split('/');
      found.push(spec.text.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The names a statement declares at its own level (variables, functions, classes, imports). */
function declaredNames(statement: ts.Statement): string[] {
  const names: string[] = [];
  const bind = (name: ts.BindingName) => {
    if (ts.isIdentifier(name)) names.push(name.text);
    else for (const element of name.elements) if (!ts.isOmittedExpression(element)) bind(element.name);
  };
  if (ts.isVariableStatement(statement)) for (const d of statement.declarationList.declarations) bind(d.name);
  else if ((ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) && statement.name)
    names.push(statement.name.text);
  else if (ts.isImportDeclaration(statement) && statement.importClause) {
    const { name, namedBindings } = statement.importClause;
    if (name) names.push(name.text);
    if (namedBindings && ts.isNamespaceImport(namedBindings)) names.push(namedBindings.name.text);
    else if (namedBindings) for (const e of namedBindings.elements) names.push(e.name.text);
  }
  return names;
}

/** The variable a write lands in: `table` for `table[i] = x`, `a.b.c = x` → `a`. */
function writtenVariable(target: ts.Expression): string | undefined {
  let node = target;
  while (
    ts.isPropertyAccessExpression(node) ||
    ts.isElementAccessExpression(node) ||
    ts.isParenthesizedExpression(node)
  )
    node = node.expression;
  return ts.isIdentifier(node) ? node.text : undefined;
}

/**
 * Whether a top-level statement only computes into the module's own variables (a loop filling a lookup
 * table): it calls nothing and writes nothing but variables of the module or of the statement itself.
 */
function computesLocally(statement: ts.Statement, moduleNames: ReadonlySet<string>): boolean {
  const own = new Set(moduleNames);
  let local = true;
  const visit = (node: ts.Node): void => {
    if (!local) return;
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name)) own.add(node.name.text);
    if (
      ts.isCallExpression(node) ||
      ts.isNewExpression(node) ||
      ts.isTaggedTemplateExpression(node) ||
      ts.isDeleteExpression(node) ||
      ts.isAwaitExpression(node)
    ) {
      local = false;
      return;
    }
    const write =
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment &&
      node.operatorToken.kind <= ts.SyntaxKind.LastAssignment
        ? node.left
        : (ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) &&
            (node.operator === ts.SyntaxKind.PlusPlusToken || node.operator === ts.SyntaxKind.MinusMinusToken)
          ? node.operand
          : undefined;
    if (write) {
      const variable = writtenVariable(write);
      if (variable === undefined || !own.has(variable)) {
        local = false;
        return;
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(statement);
  return local;
}

/**
 * What a module does when it is evaluated, beyond defining its own things: a side-effect-only import, or
 * a top-level statement that is not a declaration and calls something or writes outside the module (a
 * registration with another module, a global assigned). A bundler told `sideEffects: false` drops a module
 * nothing of which is used, and such an effect with it. A call in a declaration's initializer is taken as
 * making the value (a frozen list, a typed array), not as an effect.
 */
function sideEffectsOf(source: ts.SourceFile): string[] {
  const moduleNames = new Set(source.statements.flatMap(declaredNames));
  return source.statements
    .filter((s) => {
      if (ts.isImportDeclaration(s)) return !s.importClause;
      if (
        ts.isExportDeclaration(s) ||
        ts.isFunctionDeclaration(s) ||
        ts.isClassDeclaration(s) ||
        ts.isVariableStatement(s) ||
        ts.isEmptyStatement(s)
      )
        return false;
      return !computesLocally(s, moduleNames);
    })
    .map((s) => s.getText(source).split('\n')[0]);
}

describe('the blobless package', () => {
  const tmp = useTmpDir('package');
  let tarball: string;

  beforeAll(async () => {
    buildLibrary();
    const packed = JSON.parse(
      await command('npm', ['pack', '--json', '--pack-destination', tmp()], packageDir),
    ) as { filename: string }[];
    tarball = join(tmp(), packed[0].filename);
  });

  it('passes publint with nothing to say, not even a suggestion', async () => {
    const data = await readFile(tarball);
    const { messages, pkg } = await publint({
      pack: { tarball: data.buffer as ArrayBuffer },
      level: 'suggestion',
    });
    expect(messages.map((m) => formatMessage(m, pkg))).toEqual([]);
  });

  it('passes attw (are the types wrong) for every entry point, as ESM in Node and in bundlers', async () => {
    // ESM only, by design: attw's esm-only profile leaves out the node10 and CommonJS resolutions. It exits
    // non-zero on any problem, and `command` then fails with its table.
    await command(bin('attw'), [tarball, '--profile', 'esm-only', '--format', 'table-flipped'], tmp());
  });

  it('declares the packages its code imports, and only those, at the versions the repository tests', async () => {
    const manifest = readManifest();
    const root = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const imported = new Set<string>();
    for (const file of await filesUnder(distDir)) {
      const text = await readFile(join(distDir, file), 'utf8');
      for (const name of importedPackages(ts.createSourceFile(file, text, ts.ScriptTarget.Latest))) {
        imported.add(name);
      }
    }
    expect(Object.keys(manifest.dependencies).sort()).toEqual([...imported].sort());
    for (const [name, range] of Object.entries(manifest.dependencies)) {
      expect({ name, range }).toEqual({ name, range: root.dependencies[name] });
    }
  });

  it('says which of its modules have side effects: exactly those that do', async () => {
    const manifest = readManifest();
    const withEffects: Record<string, string[]> = {};
    for (const file of await filesUnder(distDir)) {
      if (!file.endsWith('.js')) continue;
      const text = await readFile(join(distDir, file), 'utf8');
      const effects = sideEffectsOf(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true));
      if (effects.length > 0) withEffects[`./dist/${file}`] = effects;
    }
    const declared = manifest.sideEffects === false ? [] : manifest.sideEffects;
    expect(Object.keys(withEffects).sort(), JSON.stringify(withEffects, null, 2)).toEqual(
      Array.isArray(declared) ? [...declared].sort() : declared,
    );
  });

  it('has its API reference in docs/api, current, every export of its entry points documented', async () => {
    const generated = await generateApiDocsToTemp();
    try {
      const files = await filesUnder(generated.dir);
      expect(await filesUnder(apiDocsDir), 'run `npm run docs:api`').toEqual(files);
      for (const file of files) {
        const [want, have] = await Promise.all([
          readFile(join(generated.dir, file), 'utf8'),
          readFile(join(apiDocsDir, file), 'utf8'),
        ]);
        expect(have, `docs/api/${file} is out of date: run \`npm run docs:api\``).toBe(want);
      }
    } finally {
      generated.remove();
    }
  });

  describe('installed from its tarball into a project outside the repository', () => {
    let project: string;
    const fixture = () => join(inject('fixturesDir'), 'basic.git');
    const repoUrl = (name: string) => `${inject('gitServerUrl')}/${name}`;
    const node = (script: string, args: string[]) => command(process.execPath, [script, ...args], project);

    beforeAll(async () => {
      project = join(tmp(), 'project');
      await mkdir(project);
      await writeFile(
        join(project, 'package.json'),
        JSON.stringify({ name: 'scratch', private: true, type: 'module' }, null, 2),
      );
      await cp(join(repoRoot, 'examples'), project, { recursive: true });
      // The page example's worker gives isomorphic-git the Buffer browsers lack, from the `buffer` package.
      const root = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
      };
      // From npm's cache when it holds the versions (the repository's `npm ci` put them there).
      await command(
        'npm',
        [
          'install',
          '--prefer-offline',
          '--no-audit',
          '--no-fund',
          tarball,
          `buffer@${root.dependencies.buffer}`,
        ],
        project,
      );
    });

    it('installs the package itself, not a link to the repository', async () => {
      const installed = join(project, 'node_modules/blobless');
      expect(JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')).version).toBe(
        readManifest().version,
      );
      expect(await filesUnder(installed)).toEqual(
        expect.arrayContaining(entryPoints().flatMap((e) => [e.js.slice(2), e.types.slice(2)])),
      );
    });

    it('type-checks the examples and the code in the guide and README against the installed declarations', async () => {
      // Each TypeScript block of the guide, and of the package's README, is a module of its own.
      const blocks: string[] = [];
      for (const doc of ['docs/LIBRARY.md', 'packages/blobless/README.md']) {
        const text = await readFile(join(repoRoot, doc), 'utf8');
        blocks.push(...[...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]));
      }
      expect(blocks.length).toBeGreaterThan(5);
      await mkdir(join(project, 'docs'));
      const snippets = blocks.map((_, i) => `docs/block-${i + 1}.ts`);
      await Promise.all(blocks.map((code, i) => writeFile(join(project, snippets[i]), code)));
      await writeFile(
        join(project, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module: 'ESNext',
            moduleResolution: 'Bundler',
            lib: ['ES2023', 'DOM', 'DOM.Iterable'],
            // The Node examples' globals, from the repository's @types/node (a tool here, as tsc is).
            typeRoots: [join(repoRoot, 'node_modules/@types')],
            types: ['node'],
            strict: true,
            allowJs: true,
            allowImportingTsExtensions: true,
            noEmit: true,
            // The package's declarations and its dependencies' are checked; TypeScript's own lib files
            // need not be (half the time).
            skipDefaultLibCheck: true,
          },
          include: ['read-file', 'node', 'sparse-checkout', 'docs'],
        }),
      );
      const checked = await command(bin('tsc'), ['-p', project, '--listFiles'], project);
      // Each example was in the program (a JavaScript one is checked for its // @ts-check).
      for (const example of [
        'read-file/main.ts',
        'node/clone.mjs',
        'sparse-checkout/sparseCheckout.js',
        ...snippets,
      ]) {
        expect(checked).toContain(join(project, example));
      }
    });

    it("names in docs/LIBRARY.md's table of error codes only codes the package has", async () => {
      const guide = await readFile(join(repoRoot, 'docs/LIBRARY.md'), 'utf8');
      const table = guide.slice(guide.indexOf('| code '), guide.indexOf('`ERROR_CODES` lists them all'));
      const named = [...table.matchAll(/^\| (.+?) \|/gm)].flatMap((row) =>
        [...row[1].matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]),
      );
      expect(named.length).toBeGreaterThan(10);
      const codes = JSON.parse(
        await command(
          process.execPath,
          [
            '--input-type=module',
            '-e',
            "console.log(JSON.stringify((await import('blobless')).ERROR_CODES))",
          ],
          project,
        ),
      ) as string[];
      expect(named.filter((code) => !codes.includes(code))).toEqual([]);
    });

    it('clones, reads a file and fetches in Node (examples/node)', async () => {
      const out = await node('node/clone.mjs', [repoUrl('basic.git'), 'src/greet.js']);
      const log = await git(['log', '--format=%H %s', '-5', 'HEAD'], { cwd: fixture() });
      const file = await git(['show', 'HEAD:src/greet.js'], { cwd: fixture() });
      expect(out).toBe(
        `${log}== src/greet.js (${Buffer.byteLength(file)} bytes) ==\n${file}` +
          '== fetch: 0 new commits, 0 refs updated ==\n',
      );
    });

    it('says what went wrong by its code (examples/node on a repository that is not there)', async () => {
      const failed = await node('node/clone.mjs', [repoUrl('missing.git')]).then(
        () => 'exited 0',
        (err: Error) => err.message,
      );
      expect(failed).toMatch(/^HTTP_NOT_FOUND: No git repository at /m);
    });

    it('checks out one folder, its blobs in one request (examples/sparse-checkout)', async () => {
      const dest = join(tmp(), 'sparse');
      const out = await node('sparse-checkout/checkout.mjs', [repoUrl('basic.git'), 'src', dest]);
      expect(out).toMatch(/^3 files of src\/, their contents in 1 request\(s\), \d+ bytes\n$/);
      const want = join(tmp(), 'sparse-want');
      await mkdir(want);
      await run('sh', ['-c', `git -C "${fixture()}" archive HEAD src | tar -x -C "${want}"`]);
      const wanted = await filesUnder(want);
      expect(await filesUnder(dest)).toEqual(wanted);
      for (const file of wanted) {
        expect(await readFile(join(dest, file))).toEqual(await readFile(join(want, file)));
      }
    });

    it('reads one file of a repository in a page, in Chromium (examples/read-file)', async () => {
      const page = join(project, 'read-file');
      const dist = join(tmp(), 'read-file-dist');
      await viteBuild({ root: page, logLevel: 'warn', build: { outDir: dist, emptyOutDir: true } });
      const server = await preview({
        root: page,
        logLevel: 'warn',
        build: { outDir: dist },
        preview: { port: 0, host: '127.0.0.1' },
      });
      const browser = await chromium.launch(chromiumLaunch());
      try {
        const tab = await browser.newPage();
        const repo = encodeURIComponent(repoUrl('basic.git'));
        await tab.goto(`${server.resolvedUrls?.local[0]}?repo=${repo}&path=src/greet.js`);
        const want = await git(['show', 'HEAD:src/greet.js'], { cwd: fixture() });
        await expect.poll(() => tab.locator('#file').textContent(), { timeout: 30_000 }).toBe(want);
      } finally {
        await browser.close();
        await server.close();
      }
    });
  });
});
