// `npm run build:lib`: the package's dist/, compiled by TypeScript itself from workers/.
//
// Why tsc and no bundler: a library's consumers bundle it themselves, so one plain ES module per source file
// (types stripped, comments kept, nothing renamed) is what they can tree-shake best and read in a stack
// trace without a source map; the .d.ts come from the same compiler pass that type-checks them. tsc
// rewrites the sources' `./x.ts` imports to `./x.js` in the JavaScript (rewriteRelativeImportExtensions) but
// not in the declarations, so a declaration transformer does that here, for TypeScript versions and tools
// that would not resolve `.ts` inside a .d.ts.
import { existsSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { distDir, entryPoints, packageDir, repoRoot } from './entryPoints.ts';

/** `./x.ts` → `./x.js` (and .mts/.cts); package names and other specifiers are left alone. */
export function builtSpecifier(specifier: string): string {
  if (!/^\.\.?\//.test(specifier)) return specifier;
  return specifier.replace(/\.([mc]?)ts$/, '.$1js');
}

const rewriteDeclarationImports: ts.TransformerFactory<ts.SourceFile | ts.Bundle> = (context) => {
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
  return (root) => ts.visitNode(root, visit) as ts.SourceFile | ts.Bundle;
};

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
    { afterDeclarations: [rewriteDeclarationImports] },
  );
  if (emitted.emitSkipped || emitted.diagnostics.length > 0) throw new Error(format(emitted.diagnostics));
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
