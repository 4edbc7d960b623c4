// Object ids in hex, as git writes them: 40 digits for SHA-1, 64 for SHA-256 (git's hash-function-transition;
// gitprotocol-v2 `object-format`). Repositories here are SHA-1: the wire layer lets 64-digit ids through its
// line syntax so that the object-format check, not a parse error, is what refuses a SHA-256 server.

/**
 * An object id in lowercase hex. A plain string, not a branded type: ids arrive as strings from
 * isomorphic-git, from IndexedDB records and across the worker boundary, and a brand would need a cast at
 * each of those that checks nothing. Where an id enters from outside, the validators below check it.
 */
export type ObjectId = string;

/** git's null id (`null_oid`): receive-pack's old value for a ref being created, new value for a deletion. */
export const ZERO_OID: ObjectId = '0'.repeat(40);

/** A SHA-1 id as git writes it, 40 lowercase hex digits: regex source, for patterns that hold one. */
export const SHA1_HEX = '[0-9a-f]{40}';

/** A SHA-1 or SHA-256 id (40 or 64 lowercase hex digits): regex source, for protocol lines. */
export const OBJECT_ID_HEX = '[0-9a-f]{40}(?:[0-9a-f]{24})?';

const SHA1 = new RegExp(`^${SHA1_HEX}$`);
const SHA1_ANY_CASE = new RegExp(`^${SHA1_HEX}$`, 'i');
const SHA1_OR_SHA256 = new RegExp(`^${OBJECT_ID_HEX}$`);

/** A SHA-1 id exactly as git writes it in its files and on the wire: lowercase. */
export function isSha1Hex(s: string): s is ObjectId {
  return SHA1.test(s);
}

/** A SHA-1 id as a person or an address may spell it, upper case allowed (lower it before use). */
export function isSha1HexAnyCase(s: string): boolean {
  return SHA1_ANY_CASE.test(s);
}

/** An id of either object format, lowercase: what a protocol line may carry where an id goes. */
export function isObjectIdHex(s: string): s is ObjectId {
  return SHA1_OR_SHA256.test(s);
}
