// What makes a file's three versions unfit for isomorphic-git's text merge, which reads each as UTF-8 and
// splits it into lines at LF (CRLF kept) with a JavaScript pattern whose `.` stops at CR, U+2028 and U+2029:
// those characters, and every byte that is not UTF-8, are lost or changed in what it writes back. git merges
// such text byte for byte, and stops on a conflict where a version is binary (ll_merge's binary driver).
import { isBinary } from '../../diff/binaryContent.ts';

/** Why a text merge would damage a file (the first that applies); null when it would not. */
export type TextMergeHazard = 'binary' | 'encoding' | 'line-ends';

/** A carriage return not followed by a line feed, or a line or paragraph separator. */
const ODD_LINE_END = /\r(?!\n)|[\u2028\u2029]/;

/** The hazard of merging these versions of one file as text: binary first, then encoding, then line ends. */
export function textMergeHazard(versions: readonly Uint8Array[]): TextMergeHazard | null {
  if (versions.some(isBinary)) return 'binary';
  const decoder = new TextDecoder('utf-8', { fatal: true });
  // Encoding wins over line ends in any version, so every version is decoded before line ends decide.
  let oddLineEnds = false;
  for (const bytes of versions) {
    let text: string;
    try {
      text = decoder.decode(bytes);
    } catch {
      return 'encoding';
    }
    oddLineEnds ||= ODD_LINE_END.test(text);
  }
  return oddLineEnds ? 'line-ends' : null;
}
