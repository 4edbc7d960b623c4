import { DEFAULT_PACK_LIMITS, type PackLimits } from '../../pack/packLimits.ts';
import { DEFAULT_WIRE_LIMITS, type WireLimits } from '../../wire/wireLimits.ts';

/** Every cap a clone applies: the wire's on responses, the pack's on objects and inflation. */
export type CloneLimits = WireLimits & PackLimits;

/** The clone's caps: the given ones, defaults for the rest. */
export function cloneLimits(opts: { limits?: Partial<CloneLimits> }): CloneLimits {
  return { ...DEFAULT_WIRE_LIMITS, ...DEFAULT_PACK_LIMITS, ...opts.limits };
}
