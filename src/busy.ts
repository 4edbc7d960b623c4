import { useEffect, useState } from 'preact/hooks';

/**
 * Operations that write to a repository and must not be cut off by a page reload (a clone, a checkout):
 * the update prompt waits for them. A reload kills the worker mid-write, and a half-written clone is
 * only cleaned up by the worker that wrote it.
 */
const running = new Map<number, string>();
const listeners = new Set<() => void>();
let next = 0;

export async function whileBusy<T>(label: string, work: () => Promise<T>): Promise<T> {
  const id = next++;
  running.set(id, label);
  for (const l of listeners) l();
  try {
    return await work();
  } finally {
    running.delete(id);
    for (const l of listeners) l();
  }
}

/** What is running now (the first one's label), or null. */
export function busyWith(): string | null {
  return running.values().next().value ?? null;
}

export function useBusy(): string | null {
  const [label, setLabel] = useState(busyWith);
  useEffect(() => {
    const update = () => setLabel(busyWith());
    listeners.add(update);
    update();
    return () => void listeners.delete(update);
  }, []);
  return label;
}
