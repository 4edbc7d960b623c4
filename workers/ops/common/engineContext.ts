// What every operation is given: the engine it runs in. There are no module-level caches, locks or
// credentials anywhere below the engine; each lives in the instance createEngine made and reaches an
// operation through this context, as gitoxide hands every command its Repository. The folders above add
// what they keep (maintenance/, sync/, read/: see their `…Context` interfaces); the engine builds one
// object that is all of them.

import type { PackLimits } from '../../pack/packLimits.ts';
import type { Store } from '../../store/store.ts';
import { GitHttpClient, type GitHttpOptions } from '../../transport/gitHttp.ts';
import type { RetryPolicy } from '../../transport/retryPolicy.ts';
import type { WireLimits } from '../../wire/wireLimits.ts';
import type { RepoCaches } from './repoCaches.ts';

/** Every cap on what a server may make an operation cost: the wire's on responses, the pack's on objects. */
export type EngineLimits = WireLimits & PackLimits;

/** createEngine's options as the operations read them: every default filled in. */
export interface EngineSettings {
  /** Names the engine in what it writes: `.git/description` ("Cloned by Blobless"), a merge's author. */
  readonly productName: string;
  /** The author of a merge commit made by pull when none is given. */
  readonly mergeAuthor: { readonly name: string; readonly email: string };
  readonly limits: Readonly<EngineLimits>;
  /** Changes to the retry policy (transport/retryPolicy.ts) for every request of this engine. */
  readonly retry: Readonly<Partial<RetryPolicy>>;
  /** The fetch every request goes through; the global one when undefined. */
  readonly fetch: typeof fetch | undefined;
  /** The bound on each pack's cache of read objects (packObjectCache.ts). */
  readonly packObjectCacheBytes: number;
  /** Prefix of the User Timing measures (timeline.ts): `<namespace>:`. */
  readonly timelinePrefix: string;
}

export interface OpsContext {
  readonly store: Store;
  readonly settings: EngineSettings;
  readonly repos: RepoCaches;
}

/** A client for `url` that sends through the engine's fetch, follows its retry policy and keeps its limits. */
export function connect(ctx: OpsContext, url: string, opts: GitHttpOptions = {}): GitHttpClient {
  const { fetch, retry, limits } = ctx.settings;
  return new GitHttpClient(url, { fetch, retry, maxInfoRefsBytes: limits.maxInfoRefsBytes, ...opts });
}
