import type { Engine } from '../workers/engine/client.ts';

/**
 * The person is about to clone: the clone form's URL field got focus or text (views/CloneForm.tsx), or the
 * bench page's stand-in for that moment. Warms the worker's pack ingester up, once per worker (a clone that
 * begins stops it). Not at page load: a page that only reopens a stored
 * repository, or a deep link that clones at once, would pay its worker time for nothing
 * (docs/decisions/warm-up.md).
 */
export function warmUpForClone(client: Engine, args?: { rounds?: number }): Promise<'done' | 'stopped'> {
  let warming = asked.get(client);
  if (!warming) {
    warming = client.warmUp(args);
    asked.set(client, warming);
  }
  return warming;
}

/** Asked once per worker: focus and every keystroke would otherwise each cross to the worker. */
const asked = new WeakMap<Engine, Promise<'done' | 'stopped'>>();
