/**
 * Ref names as git accepts them: git-check-ref-format(1), "Git imposes the following rules", and refs.c's
 * check_refname_format, which enforces them. A server names refs, and a ref name becomes a file path under
 * `.git/` and a config section name, so every name that comes off the wire is checked before it is used.
 *
 * Each rule has its own code, in the order of git's list, so the two can be read side by side.
 */

export type RefNameProblem =
  /** The name is empty. */
  | 'EMPTY'
  /** Rule 1: a slash-separated component begins with a dot (`refs/heads/.x`, also `.` and `..` themselves). */
  | 'COMPONENT_STARTS_WITH_DOT'
  /** Rule 1: a component ends with `.lock` (git's lock files for refs are named so). */
  | 'COMPONENT_ENDS_WITH_LOCK'
  /** Rule 2: no `/` at all (`HEAD` is only allowed where a caller says so, as git's --allow-onelevel). */
  | 'ONE_LEVEL'
  /** Rule 3: two consecutive dots anywhere. */
  | 'DOUBLE_DOT'
  /** Rule 4: an ASCII control character (below 0x20, or 0x7f DEL). */
  | 'CONTROL_CHARACTER'
  /** Rule 4: a space, `~`, `^` or `:`. */
  | 'FORBIDDEN_CHARACTER'
  /** Rule 5: `?`, `*` or `[` (git allows one `*` only in refspec patterns, which these never are). */
  | 'GLOB_CHARACTER'
  /** Rule 6: begins or ends with `/`, or holds `//` (an empty component). */
  | 'EMPTY_COMPONENT'
  /** Rule 7: ends with a dot. */
  | 'ENDS_WITH_DOT'
  /** Rule 8: holds the sequence `@{`. */
  | 'AT_BRACE'
  /** Rule 9: is the single character `@`. */
  | 'AT_ONLY'
  /** Rule 10: holds a backslash. */
  | 'BACKSLASH';

const EXPLANATIONS: Readonly<Record<RefNameProblem, string>> = {
  EMPTY: 'it is empty',
  COMPONENT_STARTS_WITH_DOT: 'a part of it begins with a dot',
  COMPONENT_ENDS_WITH_LOCK: 'a part of it ends with ".lock"',
  ONE_LEVEL: 'it has no "/"',
  DOUBLE_DOT: 'it contains ".."',
  CONTROL_CHARACTER: 'it contains a control character',
  FORBIDDEN_CHARACTER: 'it contains a space, "~", "^" or ":"',
  GLOB_CHARACTER: 'it contains "?", "*" or "["',
  EMPTY_COMPONENT: 'it begins or ends with "/" or contains "//"',
  ENDS_WITH_DOT: 'it ends with a dot',
  AT_BRACE: 'it contains "@{"',
  AT_ONLY: 'it is "@"',
  BACKSLASH: 'it contains a backslash',
};

/** Why git would refuse `name` as a ref name, or null if it is well formed. */
export function refNameProblem(
  name: string,
  options: { allowOneLevel?: boolean } = {},
): RefNameProblem | null {
  if (name === '') return 'EMPTY';
  if (name === '@') return 'AT_ONLY';
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return 'CONTROL_CHARACTER';
    if (c === 0x20 || c === 0x7e || c === 0x5e || c === 0x3a) return 'FORBIDDEN_CHARACTER';
    if (c === 0x3f || c === 0x2a || c === 0x5b) return 'GLOB_CHARACTER';
    if (c === 0x5c) return 'BACKSLASH';
  }
  if (name.includes('..')) return 'DOUBLE_DOT';
  if (name.includes('@{')) return 'AT_BRACE';
  const components = name.split('/');
  for (const component of components) {
    if (component === '') return 'EMPTY_COMPONENT';
    if (component.startsWith('.')) return 'COMPONENT_STARTS_WITH_DOT';
    if (component.endsWith('.lock')) return 'COMPONENT_ENDS_WITH_LOCK';
  }
  if (name.endsWith('.')) return 'ENDS_WITH_DOT';
  if (components.length < 2 && !options.allowOneLevel) return 'ONE_LEVEL';
  return null;
}

/** Whether git would accept `name` as a full ref name (`refs/...`; one-level names only if allowed). */
export function isValidRefName(name: string, options: { allowOneLevel?: boolean } = {}): boolean {
  return refNameProblem(name, options) === null;
}

/** A sentence part saying why a name was refused: `"it contains .."`. */
export function explainRefNameProblem(problem: RefNameProblem): string {
  return EXPLANATIONS[problem];
}
