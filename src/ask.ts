/**
 * Questions put to a person in the app's own dialogs (never `prompt()` or `confirm()`, which block the
 * page, cannot be styled and are suppressed in some embeddings). The dialog's code is loaded on first use.
 */
import type { AskConfirm, AskText } from './views/AskDialog.tsx';

export type { AskConfirm, AskText };

/** What the person typed, or null if they cancelled. */
export async function askText(q: AskText): Promise<string | null> {
  return (await import('./views/AskDialog.tsx')).showAsk({ kind: 'text', ...q }) as Promise<string | null>;
}

/** True when the person confirmed. */
export async function askConfirm(q: AskConfirm): Promise<boolean> {
  return (await (await import('./views/AskDialog.tsx')).showAsk({ kind: 'confirm', ...q })) === true;
}
