// No module of the engine keeps state of its own (issue 20): every cache, in-flight fetch, lock and
// credential lives in the instance createEngine makes, so two engines in one realm share nothing, and
// importing the library does nothing. Checked on the source with TypeScript's parser: every module-level
// binding of workers/ (but the worker entries directly in it, which are the app's) is listed when it can
// change, and so is every statement that acts on import. The list must hold only KNOWN_TABLES below.
//
// A binding can change unless it is a `const` whose value cannot: a literal, a function, a class, a symbol,
// a frozen value (Object.freeze), a value TypeScript keeps from being written (`as const`, a `readonly` /
// `Readonly…` type), a RegExp without the g or y flag (no lastIndex to carry), a TextEncoder, or a
// TextDecoder (stateless unless asked to stream). Anything else (`new Map()`, an array, a typed array, the
// result of a call) might, and is listed.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');

/**
 * Module-level values that are written only while the module loads, or only inside one synchronous call that
 * fills them before it reads them: nothing of a repository, an operation or an engine outlives a call in
 * them. Typed arrays cannot be frozen, so these are listed by name, each with why.
 */
const KNOWN_TABLES: Readonly<Record<string, string>> = {
  'workers/pack/crc32.ts TABLES': 'CRC-32 slicing tables, computed at load',
  'workers/pack/inflate.ts REVERSE8': 'bit-reversal table, filled at load',
  'workers/pack/inflate.ts FIXED': "RFC 1951's fixed Huffman tables, built at load",
  'workers/pack/inflate.ts EMPTY': 'an empty array: nothing to write',
  'workers/pack/inflate.ts blCount': 'scratch of one synchronous table build',
  'workers/pack/inflate.ts offsets': 'scratch of one synchronous table build',
  'workers/pack/inflate.ts sorted': 'scratch of one synchronous table build',
  'workers/pack/objectHash.ts W': "SHA-1's message schedule, scratch of one synchronous block",
  'workers/pack/objectHash.ts TYPE_NAMES': "each object type's header bytes, only read",
  'workers/pack/treeCheck.ts HFS_IGNORABLE':
    'read by String.replace only, which starts at 0 and leaves lastIndex 0',
  'workers/wire/pktLine.ts FLUSH_PKT': 'the four bytes 0000, only read',
  'workers/commitgraph/bloomFilter.ts pathBytes':
    "a path's UTF-8, scratch of one synchronous hash (grown, never read before written)",
  'workers/diff/unifiedDiff.ts EMPTY': 'an empty array: nothing to write',
  'workers/diff/unifiedDiff.ts NO_NEWLINE': "git's no-newline marker line, only read",
  'workers/pack/treeCheck.ts HEX_DIGITS': 'the ASCII bytes of the hex digits, only read',
  'workers/wire/pktLine.ts DELIM_PKT': 'the four bytes 0001, only read',
  'workers/wire/pktLine.ts RESPONSE_END_PKT': 'the four bytes 0002, only read',
};

const STATELESS_CONSTRUCTORS = new Set(['TextEncoder', 'TextDecoder']);
const READONLY_TYPE = /^(readonly |Readonly(Array|Set|Map)?<)/;
const IMMUTABLE_CALLS = new Set(['Object.freeze', 'Symbol']);

/** Whether `init` (the initializer of a `const` declared with type `type`) is a value that cannot change. */
function cannotChange(init: ts.Expression | undefined, type: ts.TypeNode | undefined): boolean {
  if (!init) return true;
  if (type && (READONLY_TYPE.test(type.getText()) || isPrimitiveType(type))) return true;
  if (ts.isParenthesizedExpression(init)) return cannotChange(init.expression, undefined);
  if (ts.isAsExpression(init) || ts.isSatisfiesExpression(init)) {
    if (ts.isAsExpression(init) && init.type.getText() === 'const') return true;
    return cannotChange(init.expression, ts.isAsExpression(init) ? init.type : type);
  }
  if (
    ts.isStringLiteralLike(init) ||
    ts.isNumericLiteral(init) ||
    ts.isBigIntLiteral(init) ||
    ts.isTemplateExpression(init) ||
    ts.isArrowFunction(init) ||
    ts.isFunctionExpression(init) ||
    ts.isClassExpression(init) ||
    init.kind === ts.SyntaxKind.TrueKeyword ||
    init.kind === ts.SyntaxKind.FalseKeyword ||
    init.kind === ts.SyntaxKind.NullKeyword ||
    ts.isPrefixUnaryExpression(init) ||
    ts.isBinaryExpression(init)
  ) {
    return true;
  }
  if (ts.isRegularExpressionLiteral(init)) return !/[gy][a-z]*$/.test(init.text);
  if (ts.isNewExpression(init)) {
    const name = init.expression.getText();
    if (STATELESS_CONSTRUCTORS.has(name)) return true;
    if (name === 'RegExp') {
      const flags = init.arguments?.[1];
      return !flags || (ts.isStringLiteralLike(flags) && !/[gy]/.test(flags.text));
    }
    return false;
  }
  if (ts.isCallExpression(init)) {
    // A string's method ('0'.repeat(40)) gives a string.
    const callee = init.expression;
    if (ts.isPropertyAccessExpression(callee) && ts.isStringLiteralLike(callee.expression)) return true;
    return IMMUTABLE_CALLS.has(callee.getText());
  }
  return false;
}

function isPrimitiveType(type: ts.TypeNode): boolean {
  return [ts.SyntaxKind.StringKeyword, ts.SyntaxKind.NumberKeyword, ts.SyntaxKind.BooleanKeyword].includes(
    type.kind,
  );
}

/** Every module-level binding of `text` that can change, and every statement that acts on import. */
function moduleState(path: string, text: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  for (const statement of source.statements) {
    if (ts.isVariableStatement(statement)) {
      const isConst = (statement.declarationList.flags & ts.NodeFlags.Const) !== 0;
      for (const d of statement.declarationList.declarations) {
        if (!isConst || !cannotChange(d.initializer, d.type)) found.push(`${path} ${d.name.getText()}`);
      }
    } else if (ts.isClassDeclaration(statement)) {
      for (const member of statement.members) {
        if (!ts.isPropertyDeclaration(member)) continue;
        const isStatic = ts.getModifiers(member)?.some((m) => m.kind === ts.SyntaxKind.StaticKeyword);
        if (!isStatic) continue;
        const readonly = ts.getModifiers(member)?.some((m) => m.kind === ts.SyntaxKind.ReadonlyKeyword);
        if (!readonly || !cannotChange(member.initializer, member.type))
          found.push(`${path} ${statement.name?.getText()}.${member.name.getText()}`);
      }
    } else if (ts.isExpressionStatement(statement) || ts.isBlock(statement) || ts.isIfStatement(statement)) {
      const line = source.getLineAndCharacterOfPosition(statement.getStart()).line + 1;
      found.push(`${path}:${line} acts on import`);
    }
  }
  return found;
}

function sources(dir: string, top = true): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== 'testing') out.push(...sources(path, false));
    } else if (!top && /\.ts$/.test(name) && !/\.(test|bench)\.ts$/.test(name) && !name.endsWith('.d.ts')) {
      out.push(path);
    }
  }
  return out;
}

describe('module-level state of the engine', () => {
  const files = sources(join(root, 'workers'));

  it('reads the engine, not the worker entries', () => {
    const names = files.map((f) => relative(root, f));
    expect(names).toContain('workers/engine/engine.ts');
    expect(names).toContain('workers/store/repoLock.ts');
    expect(names).not.toContain('workers/git.worker.ts');
  });

  it('none: every module-level binding that can change is one of the known tables', () => {
    const state = files.flatMap((f) => moduleState(relative(root, f), readFileSync(f, 'utf8')));
    expect(state.sort()).toEqual(Object.keys(KNOWN_TABLES).sort());
  });
});

describe('the check catches each kind of state', () => {
  it('lets, caches, arrays, results of calls, mutable statics, and statements run on import', () => {
    const text = [
      'let count = 0;',
      'const cache = new Map<string, number>();',
      'const queue: string[] = [];',
      'const defaults = { depth: 1 };',
      'const made = makeThing();',
      'const sticky = /a/g;',
      "const global = new RegExp('a', 'g');",
      'class Pool { static instances = new Set(); static readonly size = 4; }',
      'globalThis.Buffer = undefined;',
      'if (typeof window !== "undefined") {}',
      // None of these can change:
      "const NAME = 'blobless';",
      'const LIMIT = 64 * 1024;',
      'const FROZEN = Object.freeze({ a: 1 });',
      "const LIST = ['a', 'b'] as const;",
      'const SET: ReadonlySet<string> = new Set();',
      'const ROW: readonly number[] = [1];',
      "const KEY = Symbol('k');",
      "const PATTERN = new RegExp('^a$');",
      'const LITERAL = /^a$/i;',
      'const decoder = new TextDecoder();',
      'const fn = () => 1;',
    ].join('\n');
    expect(moduleState('m.ts', text)).toEqual([
      'm.ts count',
      'm.ts cache',
      'm.ts queue',
      'm.ts defaults',
      'm.ts made',
      'm.ts sticky',
      'm.ts global',
      'm.ts Pool.instances',
      'm.ts:9 acts on import',
      'm.ts:10 acts on import',
    ]);
  });
});
