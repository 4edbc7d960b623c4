/**
 * Questions put to a person in the app's own dialogs (never `prompt()` or `confirm()`, which block the
 * page, cannot be styled and are suppressed in some embeddings). The dialog's code is loaded on first use.
 */
export interface AskText {
  title: string;
  label: string;
  initial?: string;
  confirm: string;
  /** Why the answer cannot be used, or null when it can. */
  check?: (value: string) => string | null;
}

export interface AskConfirm {
  title: string;
  message: string;
  confirm: string;
  /** The action destroys something: the button says so in its colour. */
  danger?: boolean;
}

/** What the person typed, or null if they cancelled. */
export async function askText(q: AskText): Promise<string | null> {
  return (await import('./views/AskDialog.tsx')).showAsk({ kind: 'text', ...q }) as Promise<string | null>;
}

/** True when the person confirmed. */
export async function askConfirm(q: AskConfirm): Promise<boolean> {
  return (await (await import('./views/AskDialog.tsx')).showAsk({ kind: 'confirm', ...q })) === true;
}
