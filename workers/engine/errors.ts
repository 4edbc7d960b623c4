// Every error the engine throws, in one place: the classes of each layer, the union of their codes (made
// from each class's own list of codes, so it cannot drift), and how an error crosses the worker boundary
// and comes out as the same class on the page. This file and the error modules it imports hold no git
// code: the page's bundle carries them (engine/client.ts).

import { COMMIT_GRAPH_ERROR_CODES, CommitGraphError } from '../commitgraph/errors.ts';
import {
  AuthRequiredError,
  HostileTreeError,
  MISSING_OBJECT_ERROR_CODES,
  MissingObjectError,
  OPERATION_ERROR_CODES,
  OperationError,
  PushRejectedError,
  WorktreeDirtyError,
} from '../ops/common/errors.ts';
import { PACK_ERROR_CODES, PackError } from '../pack/errors.ts';
import { STORE_ERROR_CODES, StoreError } from '../store/errors.ts';
import { TRANSPORT_ERROR_CODES, TransportError } from '../transport/errors.ts';
import { REMOTE_ERROR_CODES, RemoteError, WIRE_ERROR_CODES, WireError } from '../wire/errors.ts';

export {
  AuthRequiredError,
  COMMIT_GRAPH_ERROR_CODES,
  CommitGraphError,
  HostileTreeError,
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
};

/** Every code any error of the engine carries, once each. */
export const ERROR_CODES = Object.freeze([
  ...new Set([
    ...TRANSPORT_ERROR_CODES,
    ...WIRE_ERROR_CODES,
    ...REMOTE_ERROR_CODES,
    ...PACK_ERROR_CODES,
    ...STORE_ERROR_CODES,
    ...OPERATION_ERROR_CODES,
    ...MISSING_OBJECT_ERROR_CODES,
    ...COMMIT_GRAPH_ERROR_CODES,
  ]),
]) as readonly ErrorCode[];

/** The `code` of every error the engine throws: narrow on it (`e.code === 'LIMIT_EXCEEDED'`). */
export type ErrorCode =
  | (typeof TRANSPORT_ERROR_CODES)[number]
  | (typeof WIRE_ERROR_CODES)[number]
  | (typeof REMOTE_ERROR_CODES)[number]
  | (typeof PACK_ERROR_CODES)[number]
  | (typeof STORE_ERROR_CODES)[number]
  | (typeof OPERATION_ERROR_CODES)[number]
  | (typeof MISSING_OBJECT_ERROR_CODES)[number]
  | (typeof COMMIT_GRAPH_ERROR_CODES)[number];

/** Any error the engine throws. */
export type BloblessError =
  | TransportError
  | WireError
  | RemoteError
  | PackError
  | StoreError
  | OperationError
  | MissingObjectError
  | CommitGraphError;

/**
 * The classes by their `name`, subclasses before the classes they extend. A subclass's name is its own
 * (HostileTreeError), so the page rebuilds the most precise class, which `instanceof` its parents too.
 */
export const ERROR_CLASSES: Readonly<Record<string, abstract new (...args: never[]) => BloblessError>> =
  Object.freeze({
    WorktreeDirtyError,
    HostileTreeError,
    PushRejectedError,
    AuthRequiredError,
    OperationError,
    MissingObjectError,
    TransportError,
    WireError,
    RemoteError,
    PackError,
    StoreError,
    CommitGraphError,
  });

/** Whether `e` is an error of the engine: then `e.code` is an ErrorCode. */
export function isBloblessError(e: unknown): e is BloblessError {
  if (!(e instanceof Error)) return false;
  return Object.values(ERROR_CLASSES).some((cls) => e instanceof cls);
}

/** An error as it crosses the worker boundary: structured-clonable, its class named. */
export interface SerializedError {
  /** The error class's name (`TransportError`): the class the receiving side makes again. */
  name: string;
  /** The error's code; INTERNAL for a value the engine did not throw as one of its errors. */
  code: ErrorCode;
  /** The message for people, as thrown. */
  message: string;
  /** The stack where it was thrown, in the worker; absent when the runtime gave none. */
  stack?: string;
  /** The class's own fields (`status`, `limit`, `path`, `repoId`, …), those a structured clone can carry. */
  fields: Record<string, unknown>;
  /** The error's `cause`, serialized the same way (a few levels deep at most). */
  cause?: SerializedError;
}

const OWN: ReadonlySet<string> = new Set(['name', 'code', 'message', 'stack', 'cause']);

/**
 * What crosses for any thrown value. An error of the engine keeps its class and fields; anything else (a
 * library's error, a bug) becomes OperationError INTERNAL with its message, its own name and code kept
 * among the fields, so every error the page sees carries an ErrorCode.
 */
export function serializeError(value: unknown, depth = 0): SerializedError {
  const err = value as (Error & Record<string, unknown>) | undefined;
  const ours = isBloblessError(value);
  const fields: Record<string, unknown> = {};
  if (err && typeof err === 'object') {
    for (const [key, field] of Object.entries(err)) {
      if (OWN.has(key) || typeof field === 'function') continue;
      try {
        fields[key] = structuredClone(field);
      } catch {
        // Not clonable (a stream, a DOM object): left out.
      }
    }
  }
  if (!ours) {
    fields.originalName = err?.name ?? typeof value;
    if (err?.code !== undefined) fields.originalCode = String(err.code);
  }
  const cause = err instanceof Error && err.cause !== undefined && depth < 4 ? err.cause : undefined;
  return {
    name: ours ? value.name : 'OperationError',
    code: ours ? value.code : 'INTERNAL',
    message: err instanceof Error ? err.message : String(value),
    stack: err instanceof Error ? err.stack : undefined,
    fields,
    cause: cause === undefined ? undefined : serializeError(cause, depth + 1),
  };
}

/**
 * The error again, as an instance of its class: made from the class's prototype, not its constructor
 * (which would write the message anew), with every field the worker's error had.
 */
export function rebuildError(serialized: SerializedError): BloblessError {
  const cls = ERROR_CLASSES[serialized.name] ?? OperationError;
  const err = Object.create(cls.prototype) as BloblessError;
  const define = (key: string, value: unknown, enumerable = true) =>
    Object.defineProperty(err, key, { value, enumerable, writable: true, configurable: true });
  define('message', serialized.message, false);
  define('name', serialized.name in ERROR_CLASSES ? serialized.name : 'OperationError');
  define('code', serialized.code);
  for (const [key, value] of Object.entries(serialized.fields)) define(key, value);
  if (serialized.stack) define('stack', serialized.stack, false);
  if (serialized.cause) define('cause', rebuildError(serialized.cause), false);
  return err;
}
