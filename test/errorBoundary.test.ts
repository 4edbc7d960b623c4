// Every error the engine throws carries a code of the exported ErrorCode union, and crosses the worker
// boundary (exposeEngine → wrapEngine, over a real MessageChannel: structured clone, as to a worker) as
// the same class, with its code, message, fields and cause: the page narrows on `e.code` and `instanceof`.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AuthRequiredError,
  type BloblessError,
  COMMIT_GRAPH_ERROR_CODES,
  CommitGraphError,
  ERROR_CLASSES,
  ERROR_CODES,
  type ErrorCode,
  HostileTreeError,
  isBloblessError,
  MISSING_OBJECT_ERROR_CODES,
  MissingObjectError,
  OPERATION_ERROR_CODES,
  OperationError,
  PACK_ERROR_CODES,
  PackError,
  PushRejectedError,
  REMOTE_ERROR_CODES,
  RemoteError,
  STORE_ERROR_CODES,
  StoreError,
  TRANSPORT_ERROR_CODES,
  TransportError,
  WIRE_ERROR_CODES,
  WireError,
  WorktreeDirtyError,
} from '../workers/engine/index.ts';
import { memoryStorage } from '../workers/storage/memory.ts';
import { testEngine } from './support/engine.ts';
import { linkedEngine } from './support/workerBoundary.ts';

const root = join(import.meta.dirname, '..');

/** One error of each class for each code it carries: every code of the union, and every class. */
function everyError(): BloblessError[] {
  const cause = new TransportError('NETWORK_ERROR', 'The connection was reset.', undefined, {
    beforeResponse: false,
  });
  return [
    ...TRANSPORT_ERROR_CODES.map((c) => new TransportError(c, `transport ${c}`, 503, { retryAfterMs: 2000 })),
    ...WIRE_ERROR_CODES.map(
      (c) => new WireError(c, `wire ${c}`, { byteOffset: 7, limit: 'maxLsRefsBytes', cause }),
    ),
    ...REMOTE_ERROR_CODES.map(() => new RemoteError('upload-pack: not our ref', 'err-packet')),
    ...PACK_ERROR_CODES.map((c) => new PackError(c, `pack ${c}.`, { limit: 'maxObjectSize', cause })),
    ...STORE_ERROR_CODES.map((c) => new StoreError(c, `store ${c}`)),
    ...OPERATION_ERROR_CODES.map((c) => new OperationError(c, `operation ${c}`)),
    ...MISSING_OBJECT_ERROR_CODES.map(
      (c) =>
        new MissingObjectError('a'.repeat(40), 'the server is gone', {
          path: 'docs/a.md',
          offline: c === 'OFFLINE',
          others: 2,
          cause,
        }),
    ),
    ...COMMIT_GRAPH_ERROR_CODES.map((c) => new CommitGraphError(c, `commit-graph ${c}`)),
    new WorktreeDirtyError(['a.txt', 'b/c.txt']),
    new HostileTreeError('.git/config', 'HAS_DOTGIT', 'names .git'),
    new PushRejectedError('PUSH_NON_FAST_FORWARD', 'refs/heads/main', 'Fetch first.', 'non-fast-forward'),
    new AuthRequiredError('repo-1', 'example.com', true, 'https://proxy.example/'),
  ];
}

const { engine } = testEngine({ storage: memoryStorage(), namespace: 'errors' });
let toThrow: unknown;
const { client } = linkedEngine(engine, {
  repo: {
    readFile: async () => {
      throw toThrow;
    },
  },
  listRepos: async () => {
    throw toThrow;
  },
});

afterAll(async () => {
  await client.close();
});

async function across(err: unknown, where: 'engine' | 'repo' = 'repo'): Promise<BloblessError> {
  toThrow = err;
  const call = where === 'repo' ? client.repo('r').readFile({ ref: 'HEAD', path: 'a' }) : client.listRepos();
  return call.then(
    () => {
      throw new Error('the call unexpectedly succeeded');
    },
    (e: BloblessError) => e,
  );
}

/** The error's own enumerable fields (code, name, status, limit, paths, …), as a plain object. */
const fieldsOf = (e: object) => ({ ...e });

describe('ErrorCode', () => {
  it('is every code of every class, once', () => {
    const codes = new Set(everyError().map((e) => e.code));
    expect([...codes].sort()).toEqual([...ERROR_CODES].sort());
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
  });

  it('has a sample of every class of ERROR_CLASSES above', () => {
    expect(new Set(everyError().map((e) => e.name))).toEqual(new Set(Object.keys(ERROR_CLASSES)));
  });

  it('names every error class of workers/ (an error class left out would cross as INTERNAL)', () => {
    const declared: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (/\.ts$/.test(name) && !/\.test\.ts$/.test(name)) {
          const text = readFileSync(path, 'utf8');
          for (const m of text.matchAll(/^export class (\w+) extends (?:Error|\w+Error)\b/gm)) {
            declared.push(`${relative(root, path)} ${m[1]}`);
          }
        }
      }
    };
    walk(join(root, 'workers'));
    // The scan finds the exported classes themselves (it reads what it should), and nothing beside them.
    const names = declared.map((d) => d.split(' ')[1]);
    expect(names).toEqual(expect.arrayContaining(Object.keys(ERROR_CLASSES)));
    const missing = declared.filter((d) => !(d.split(' ')[1] in ERROR_CLASSES));
    expect(missing).toEqual([]);
  });
});

describe('an error crosses the worker boundary as itself', () => {
  it.each(everyError().map((e) => [`${e.name} ${e.code}`, e] as const))('%s', async (_, original) => {
    const received = await across(original);
    const cls = ERROR_CLASSES[original.name];
    expect(cls).toBeDefined();
    expect(received).toBeInstanceOf(cls);
    expect(received).toBeInstanceOf(Error);
    expect(isBloblessError(received)).toBe(true);
    expect(received.name).toBe(original.name);
    expect(received.code).toBe(original.code);
    expect(received.message).toBe(original.message);
    expect(fieldsOf(received)).toEqual(fieldsOf(original));
    if (original.cause !== undefined) {
      expect(received.cause).toBeInstanceOf(TransportError);
      expect((received.cause as TransportError).code).toBe('NETWORK_ERROR');
    }
  });

  it('a subclass is also its parent (a PushRejectedError is an OperationError)', async () => {
    const received = await across(new PushRejectedError('PUSH_REJECTED', 'refs/heads/x', 'No.', 'hook'));
    expect(received).toBeInstanceOf(PushRejectedError);
    expect(received).toBeInstanceOf(OperationError);
    expect((received as PushRejectedError).remoteMessage).toBe('hook');
  });

  it("from the engine's own methods too", async () => {
    const received = await across(new StoreError('STORAGE_FULL', 'The disk is full.'), 'engine');
    expect(received).toBeInstanceOf(StoreError);
    expect(received.code).toBe('STORAGE_FULL');
  });

  it("anything else (a library's TypeError, a bug) arrives as OperationError INTERNAL, its name kept", async () => {
    const received = await across(new TypeError("Cannot read properties of undefined (reading 'oid')"));
    expect(received).toBeInstanceOf(OperationError);
    expect(received.code satisfies ErrorCode).toBe('INTERNAL');
    expect(received.message).toBe("Cannot read properties of undefined (reading 'oid')");
    expect(fieldsOf(received)).toMatchObject({ originalName: 'TypeError' });
  });
});
