import { DEFAULT_TREE_LIMITS, type TreeLimits } from '../../pack/packLimits.ts';
import type { EngineLimits, OpsContext } from '../common/engineContext.ts';

/** Every cap a clone applies: the wire's on responses, the pack's on objects and inflation. */
export type CloneLimits = EngineLimits;

/** The clone's caps: the given ones, the engine's for the rest. */
export function cloneLimits(ctx: OpsContext, opts: { limits?: Partial<CloneLimits> }): CloneLimits {
  return { ...ctx.settings.limits, ...opts.limits };
}

/** The tree limits among `limits`, to keep in the repo's record for later walks; undefined when none was given. */
export function treeLimitsGiven(limits: Partial<CloneLimits> | undefined): Partial<TreeLimits> | undefined {
  const given: Partial<TreeLimits> = {};
  for (const key of Object.keys(DEFAULT_TREE_LIMITS) as (keyof TreeLimits)[]) {
    if (limits?.[key] !== undefined) given[key] = limits[key];
  }
  return Object.keys(given).length > 0 ? given : undefined;
}
