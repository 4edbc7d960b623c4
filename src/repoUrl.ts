/**
 * What a person types as a repository's address, made into the URL git would clone, and how two
 * addresses are told to be the same remote. Pure: no worker, no network.
 */

/** Hosts whose repositories live at `https://<host>/<owner>/<repo>`: `owner/repo` alone means GitHub. */
const SHORTHAND_HOST = 'github.com';

/**
 * `https://…` as given; `github.com/owner/repo` and other `host.tld/path` forms with https:// added;
 * `owner/repo` as a GitHub repository; `git@host:owner/repo.git` (an SSH address, which a browser cannot
 * use) as its https:// twin. Anything else is returned trimmed, for the worker to refuse with its reason.
 */
export function expandRepoUrl(input: string): string {
  const text = input.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return text;
  const scp = /^[\w.-]+@([\w.-]+\.[a-z]{2,}):\/?(.+)$/i.exec(text);
  if (scp) return `https://${scp[1]}/${scp[2]}`;
  if (/^[\w.-]+\.[a-z]{2,}(:\d+)?\/\S+$/i.test(text)) return `https://${text}`;
  if (/^[\w-]+\/[\w.-]+$/.test(text)) return `https://${SHORTHAND_HOST}/${text}`;
  return text;
}

/** The address with what git ignores when it names a remote taken away: a trailing slash, `.git`, case of the host. */
export function remoteKey(url: string): string {
  try {
    const u = new URL(url.trim());
    const path = u.pathname.replace(/\/+$/, '').replace(/\.git$/, '');
    return `${u.protocol}//${u.host.toLowerCase()}${path}`;
  } catch {
    return url.trim();
  }
}

export function sameRemote(a: string, b: string): boolean {
  return remoteKey(a) === remoteKey(b);
}
