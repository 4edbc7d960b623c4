import { createContext } from 'preact';
import type { RepoSummary } from '../../workers/engine/index.ts';

/** The stored repo a view belongs to, for the few deep views that depend on what kind of repo it is. */
export const CurrentRepo = createContext<RepoSummary | null>(null);
