import type { Engine } from '../workers/engine/client.ts';

/**
 * The calls every page load of the app makes to its git worker, in this order, before the person does
 * anything: the storage check (RepairNotice), the channel of other tabs' events (repoActivity), the stored
 * repositories (Home). The ingester's warm-up is not one of them: it waits for a sign of a clone
 * (warmUpForClone.ts, docs/decisions/warm-up.md). The benchmark page makes its start-up through
 * `startUp` too, so what it measures is what the app's start-up leaves; e2e/startup.spec.ts records what
 * the built app sends through the worker boundary at page load and checks it is exactly this list.
 */
export const STARTUP_CALLS = ['startupRepair', 'repoEvents', 'listRepos'] as const;

export type StartupCall = (typeof STARTUP_CALLS)[number];

/** Each start-up call's answer, as the engine gives it. */
export type Startup = { [K in StartupCall]: ReturnType<Engine[K]> };

/** Makes the start-up calls, in STARTUP_CALLS's order, without waiting for any answer. */
export function startUp(client: Engine): Startup {
  const started: Partial<Record<StartupCall, unknown>> = {};
  for (const name of STARTUP_CALLS) started[name] = (client[name] as () => Promise<unknown>)();
  return started as Startup;
}
