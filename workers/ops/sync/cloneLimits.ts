import type { EngineLimits, OpsContext } from '../common/engineContext.ts';

/** Every cap a clone applies: the wire's on responses, the pack's on objects and inflation. */
export type CloneLimits = EngineLimits;

/** The clone's caps: the given ones, the engine's for the rest. */
export function cloneLimits(ctx: OpsContext, opts: { limits?: Partial<CloneLimits> }): CloneLimits {
  return { ...ctx.settings.limits, ...opts.limits };
}
