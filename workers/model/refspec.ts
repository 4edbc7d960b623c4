// Refspecs as fetch and clone use them (git-fetch(1) "<refspec>", refspec.c): `[+]<src>:<dst>`, each side
// a full ref name, or a pattern whose one `*` ends both sides. Negative and one-sided refspecs are not
// used here and do not parse.

export interface Refspec {
  /** The leading `+`: update the destination even when it does not fast-forward. */
  force: boolean;
  /** `refs/heads/` for a pattern, the full name otherwise. */
  srcPrefix: string;
  dstPrefix: string;
  pattern: boolean;
}

/** What `git clone` writes as `remote.origin.fetch`: every branch, as a remote-tracking branch. */
export const DEFAULT_FETCH_REFSPEC = '+refs/heads/*:refs/remotes/origin/*';

/** The refspec in `spec`, or null where it is not one of the two shapes above. */
export function parseRefspec(spec: string): Refspec | null {
  const m = /^(\+?)([^:]+):(.+)$/.exec(spec.trim());
  if (!m) return null;
  const [, plus, src, dst] = m;
  const pattern = src.endsWith('/*') && dst.endsWith('/*');
  if (!pattern && (src.includes('*') || dst.includes('*'))) return null;
  return {
    force: plus === '+',
    srcPrefix: pattern ? src.slice(0, -1) : src,
    dstPrefix: pattern ? dst.slice(0, -1) : dst,
    pattern,
  };
}

/** The refspec as git writes it in a config file. */
export function formatRefspec(r: Refspec): string {
  const star = r.pattern ? '*' : '';
  return `${r.force ? '+' : ''}${r.srcPrefix}${star}:${r.dstPrefix}${star}`;
}

/**
 * The local names the remote ref `name` gets, one per refspec that matches it, in the refspecs' order and
 * each once: git fetch updates every one (refspec.c, get_fetch_map per refspec), so a config with
 * `+refs/heads/*:refs/remotes/origin/*` and `+refs/heads/main:refs/remotes/mirror/main` updates both.
 */
export function mapRef(refspecs: readonly Refspec[], name: string): string[] {
  const locals: string[] = [];
  for (const r of refspecs) {
    let local: string | null = null;
    if (r.pattern && name.startsWith(r.srcPrefix)) local = r.dstPrefix + name.slice(r.srcPrefix.length);
    else if (name === r.srcPrefix) local = r.dstPrefix;
    if (local !== null && !locals.includes(local)) locals.push(local);
  }
  return locals;
}
