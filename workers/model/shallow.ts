// The `shallow` file (gitrepository-layout: "shallow"; shallow.c): the commits whose parents a shallow
// repository does not hold, one id per line. History walks end at them, and a fetch sends them as
// `shallow` lines so that the server knows where the history stops.

import { isSha1Hex, type ObjectId } from './objectId.ts';

/** The commit ids the file names; a line that is not one is left out (git refuses such a file). */
export function parseShallow(text: string): ObjectId[] {
  return text.split('\n').filter((line) => isSha1Hex(line));
}

/** The file's text for `commits`, in the order given (callers sort where git's order matters to them). */
export function serializeShallow(commits: readonly ObjectId[]): string {
  return `${commits.join('\n')}\n`;
}
