// `npm run build:lib`: the package's dist/, compiled by TypeScript itself from workers/.
//
// Why tsc and no bundler: a library's consumers bundle it themselves, so one plain ES module per source file
// (types stripped, comments kept, nothing renamed) is what they can tree-shake best and read in a stack
// trace without a source map; the .d.ts come from the same compiler pass that type-checks them. tsc
// rewrites the sources' `./x.ts` imports to `./x.js` in the JavaScript (rewriteRelativeImportExtensions) but
// not in the declarations, so a declaration transformer does that here, for TypeScript versions and tools
// that would not resolve `.ts` inside a .d.ts.
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { distDir, entryPoints, packageDir, repoRoot } from './entryPoints.ts';

/** `./x.ts` → `./x.js` (and .mts/.cts); package names and other specifiers are left alone. */
export function builtSpecifier(specifier: string): string {
  if (!/^\.\.?\//.test(specifier)) return specifier;
  return specifier.replace(/\.([mc]?)ts$/, '.$1js');
}

/**
 * The declarations' transformer: relative `.ts` imports become `.js`, and a file that imports a module
 * declared by one of our own ambient declarations (`declare module '…'`, for a dependency that ships no
 * types) gets a `/// <reference path>` to it, which the build copies into dist/: without it, a user's
 * TypeScript would find no types for that import.
 */
function declarationTransformer(
  ambient: ReadonlyMap<string, string>,
): ts.TransformerFactory<ts.SourceFile | ts.Bundle> {
  return (context) => {
    const f = context.factory;
    const literal = (node: ts.Expression | undefined) =>
      node && ts.isStringLiteral(node) && builtSpecifier(node.text) !== node.text
        ? f.createStringLiteral(builtSpecifier(node.text))
        : undefined;
    const visit = (node: ts.Node): ts.Node => {
      if (ts.isImportDeclaration(node)) {
        const spec = literal(node.moduleSpecifier);
        if (spec)
          return f.updateImportDeclaration(node, node.modifiers, node.importClause, spec, node.attributes);
      } else if (ts.isExportDeclaration(node)) {
        const spec = literal(node.moduleSpecifier);
        if (spec)
          return f.updateExportDeclaration(
            node,
            node.modifiers,
            node.isTypeOnly,
            node.exportClause,
            spec,
            node.attributes,
          );
      } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
        const spec = literal(node.argument.literal as ts.Expression);
        if (spec)
          return f.updateImportTypeNode(
            node,
            f.updateLiteralTypeNode(node.argument, spec),
            node.attributes,
            node.qualifier,
            node.typeArguments?.map((t) => ts.visitNode(t, visit) as ts.TypeNode),
            node.isTypeOf,
          );
      }
      return ts.visitEachChild(node, visit, context);
    };
    const references = (file: ts.SourceFile): ts.FileReference[] => {
      const found = new Set<string>();
      const note = (spec: ts.Node | undefined) => {
        const declaredIn = spec && ts.isStringLiteral(spec) ? ambient.get(spec.text) : undefined;
        if (declaredIn) found.add(relative(dirname(file.fileName), declaredIn));
      };
      const scan = (node: ts.Node): void => {
        if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) note(node.moduleSpecifier);
        else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument))
          note(node.argument.literal);
        ts.forEachChild(node, scan);
      };
      scan(file);
      return [...found].map((path) => ({
        pos: -1,
        end: -1,
        fileName: path.startsWith('.') ? path : `./${path}`,
      }));
    };
    return (root) => {
      if (!ts.isSourceFile(root)) return root;
      const file = ts.visitNode(root, visit) as ts.SourceFile;
      const refs = references(root);
      if (refs.length === 0) return file;
      return f.updateSourceFile(
        file,
        file.statements,
        file.isDeclarationFile,
        [...file.referencedFiles, ...refs],
        file.typeReferenceDirectives,
        file.hasNoDefaultLib,
        file.libReferenceDirectives,
      );
    };
  };
}

/** The modules our own ambient declarations (`declare module 'name'`) describe, and the file of each. */
function ambientModules(files: readonly string[]): Map<string, string> {
  const modules = new Map<string, string>();
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
    for (const statement of source.statements) {
      if (ts.isModuleDeclaration(statement) && ts.isStringLiteral(statement.name)) {
        modules.set(statement.name.text, file);
      }
    }
  }
  return modules;
}

function format(diagnostics: readonly ts.Diagnostic[]): string {
  return ts.formatDiagnosticsWithColorAndContext(diagnostics, {
    getCanonicalFileName: (name) => name,
    getCurrentDirectory: () => repoRoot,
    getNewLine: () => '\n',
  });
}

/** Compiles the entry points and all they import into dist/; throws on any type error. */
export function buildLibrary(): { files: number } {
  const configPath = join(packageDir, 'tsconfig.json');
  const config = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(format([d]));
      },
    },
  );
  if (!config) throw new Error(`Could not read ${configPath}`);
  const sources = entryPoints().map((e) => join(repoRoot, e.source));
  const listed = config.fileNames.filter((name) => !name.endsWith('.d.ts'));
  const ambient = ambientModules(config.fileNames.filter((name) => name.endsWith('.d.ts')));
  if (listed.sort().join() !== [...sources].sort().join()) {
    throw new Error(
      `packages/blobless/tsconfig.json's "files" (${listed.map((n) => relative(repoRoot, n))}) should be the ` +
        `sources of package.json's exports (${sources.map((n) => relative(repoRoot, n))})`,
    );
  }
  for (const name of sources) {
    if (!existsSync(name)) throw new Error(`An entry point's source is missing: ${relative(repoRoot, name)}`);
  }
  rmSync(distDir, { recursive: true, force: true });
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });
  const diagnostics = ts.getPreEmitDiagnostics(program);
  if (diagnostics.length > 0) throw new Error(format(diagnostics));
  let files = 0;
  const emitted = program.emit(
    undefined,
    (name, text, bom) => {
      files++;
      ts.sys.writeFile(name, text, bom);
    },
    undefined,
    false,
    { afterDeclarations: [declarationTransformer(ambient)] },
  );
  if (emitted.emitSkipped || emitted.diagnostics.length > 0) throw new Error(format(emitted.diagnostics));
  const rootDir = config.options.rootDir ?? repoRoot;
  for (const declarations of new Set(ambient.values())) {
    const target = join(distDir, relative(rootDir, declarations));
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(declarations, target);
    files++;
  }
  for (const entry of entryPoints()) {
    for (const built of [entry.js, entry.types]) {
      if (!existsSync(join(packageDir, built)))
        throw new Error(`The build did not make ${built} (exports["${entry.subpath}"])`);
    }
  }
  return { files };
}

if (process.argv[1] === import.meta.filename) {
  const started = performance.now();
  const { files } = buildLibrary();
  console.log(
    `blobless: ${files} files in ${relative(repoRoot, distDir)} (${((performance.now() - started) / 1000).toFixed(1)} s)`,
  );
}
