export interface RemoteConfig {
  url: string;
  fetchRefspec: string;
  /** The filter of a partial clone; absent for a full clone. */
  partialCloneFilter?: string;
}

export interface RepoConfig {
  remote: RemoteConfig;
  /** The local branch that tracks the remote's branch of the same name, if HEAD is on a branch. */
  branch?: string;
}

/**
 * The `config` a `git clone --filter=blob:none` writes, so real git reads an exported repo as a partial
 * clone: `extensions.partialclone` needs repositoryformatversion 1 (partial-clone: fetching missing objects).
 */
export function serializeRepoConfig(cfg: RepoConfig): string {
  const { remote, branch } = cfg;
  const lines = [
    '[core]',
    `\trepositoryformatversion = ${remote.partialCloneFilter ? 1 : 0}`,
    '\tfilemode = true',
    '\tbare = false',
    '\tlogallrefupdates = true',
    '[remote "origin"]',
    `\turl = ${quote(remote.url)}`,
    `\tfetch = ${remote.fetchRefspec}`,
  ];
  if (remote.partialCloneFilter) {
    lines.push('\tpromisor = true', `\tpartialclonefilter = ${remote.partialCloneFilter}`);
    lines.push('[extensions]', '\tpartialclone = origin');
  }
  if (branch) lines.push(`[branch "${branch}"]`, '\tremote = origin', `\tmerge = refs/heads/${branch}`);
  return `${lines.join('\n')}\n`;
}

function quote(value: string): string {
  return /[\s;#"\\]/.test(value) ? `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"` : value;
}
