/** A name as a person can read it in a message: quoted, invisible and control characters escaped. */
export function show(name: string): string {
  const escaped = name.replace(
    /[\u0000-\u001f\u007f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return `"${escaped.replace(/"/g, '\\"')}"`;
}
