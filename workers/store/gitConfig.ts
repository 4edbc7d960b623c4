import { StoreError } from './errors.ts';

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

/** One `key = value` of a config file, as git reads it: section and key lowercased, subsection verbatim. */
export interface ConfigEntry {
  section: string;
  subsection?: string;
  key: string;
  value: string;
}

/**
 * The `config` a `git clone --filter=blob:none` writes, so real git reads an exported repo as a partial
 * clone: `extensions.partialclone` needs repositoryformatversion 1 (partial-clone: fetching missing objects).
 * Every value and subsection name is escaped as git's config writer escapes it, so a URL or a branch name
 * holding `"]`, a tab or a line feed stays one value and can never open a section of its own.
 */
export function serializeRepoConfig(cfg: RepoConfig): string {
  const { remote, branch } = cfg;
  const entries: ConfigEntry[] = [
    { section: 'core', key: 'repositoryformatversion', value: remote.partialCloneFilter ? '1' : '0' },
    { section: 'core', key: 'filemode', value: 'true' },
    { section: 'core', key: 'bare', value: 'false' },
    { section: 'core', key: 'logallrefupdates', value: 'true' },
    { section: 'remote', subsection: 'origin', key: 'url', value: remote.url },
    { section: 'remote', subsection: 'origin', key: 'fetch', value: remote.fetchRefspec },
  ];
  if (remote.partialCloneFilter) {
    entries.push(
      { section: 'remote', subsection: 'origin', key: 'promisor', value: 'true' },
      {
        section: 'remote',
        subsection: 'origin',
        key: 'partialclonefilter',
        value: remote.partialCloneFilter,
      },
      { section: 'extensions', key: 'partialclone', value: 'origin' },
    );
  }
  if (branch) {
    entries.push(
      { section: 'branch', subsection: branch, key: 'remote', value: 'origin' },
      { section: 'branch', subsection: branch, key: 'merge', value: `refs/heads/${branch}` },
    );
  }
  return serializeConfig(entries);
}

/** Writes entries as git does, one section header each time the section changes. */
export function serializeConfig(entries: ConfigEntry[]): string {
  let out = '';
  let current: string | null = null;
  for (const entry of entries) {
    const header = sectionHeader(entry.section, entry.subsection);
    if (header !== current) {
      out += `${header}\n`;
      current = header;
    }
    out += `\t${entry.key} = ${quoteValue(entry.value)}\n`;
  }
  return out;
}

/**
 * config.c get_section_header: `[section "subsection"]` with `"` and `\` backslash-escaped. git-config(1):
 * subsection names "can contain any characters except newline and the null byte".
 */
function sectionHeader(section: string, subsection: string | undefined): string {
  if (subsection === undefined) return `[${section}]`;
  if (/[\n\0]/.test(subsection)) {
    throw new StoreError(
      'CONFIG_INVALID',
      `Cannot write the config section ${JSON.stringify(subsection)}: git's config cannot hold a line feed or NUL in a section name.`,
    );
  }
  return `[${section} "${subsection.replace(/["\\]/g, '\\$&')}"]`;
}

/**
 * config.c write_pair: `\n`, `\t`, `"` and `\` escaped; the whole value quoted when it begins or ends with a
 * space or holds `;` or `#`. git's reader also turns an unquoted CR into a space, so a value with one is
 * quoted too (and one with a VT or FF, which git keeps either way): what we write reads back byte for byte.
 */
function quoteValue(value: string): string {
  if (value.includes('\0')) {
    throw new StoreError(
      'CONFIG_INVALID',
      'Cannot write a config value holding a NUL byte: git cannot read it.',
    );
  }
  const quote = /^ | $|[;#\r\v\f]/.test(value) ? '"' : '';
  const escaped = value.replace(/[\n\t"\\]/g, (c) => (c === '\n' ? '\\n' : c === '\t' ? '\\t' : `\\${c}`));
  return `${quote}${escaped}${quote}`;
}

/**
 * Reads a config file as git's config.c does (parse_value, get_extended_base_var): comments, quotes, the
 * escapes `\n \t \b \\ \"`, line continuations, whitespace outside quotes folded. Used to check that what we
 * write reads back as written; throws StoreError on what git would reject.
 */
export function parseGitConfig(text: string): ConfigEntry[] {
  const src = text.replace(/\r\n/g, '\n');
  const entries: ConfigEntry[] = [];
  let section: string | null = null;
  let subsection: string | undefined;
  let i = 0;
  const bad = (why: string) => new StoreError('CONFIG_INVALID', `The config file is malformed: ${why}.`);
  // git's isspace (git-compat-util.h, sane_ctype): space, tab, CR and LF; a vertical tab or a form feed is
  // a character of the value, and one before a key makes the line bad.
  const isSpace = (c: string) => c === ' ' || c === '\t' || c === '\r';
  while (i < src.length) {
    const c = src[i];
    if (c === '\n' || isSpace(c)) {
      i++;
    } else if (c === '#' || c === ';') {
      while (i < src.length && src[i] !== '\n') i++;
    } else if (c === '[') {
      i++;
      let name = '';
      while (i < src.length && /[A-Za-z0-9.-]/.test(src[i])) name += src[i++];
      subsection = undefined;
      if (src[i] === ' ') {
        while (src[i] === ' ') i++;
        if (src[i++] !== '"') throw bad('a section header has no quoted subsection');
        let sub = '';
        for (;;) {
          const d = src[i++];
          if (d === undefined || d === '\n') throw bad('a subsection name is not closed');
          if (d === '"') break;
          sub += d === '\\' ? src[i++] : d;
        }
        subsection = sub;
      }
      if (src[i++] !== ']') throw bad('a section header is not closed');
      section = name.toLowerCase();
    } else if (/[A-Za-z]/.test(c)) {
      if (section === null) throw bad('a key comes before any section');
      let key = '';
      while (i < src.length && /[A-Za-z0-9-]/.test(src[i])) key += src[i++];
      while (isSpace(src[i] ?? '')) i++;
      let value = 'true';
      if (src[i] === '=') {
        i++;
        let out = '';
        let quoted = false;
        let comment = false;
        let spaces = 0;
        for (;;) {
          const d = src[i++];
          if (d === undefined || d === '\n') {
            if (quoted) throw bad('a quoted value is not closed');
            break;
          }
          if (comment) continue;
          if (isSpace(d) && !quoted) {
            if (out.length > 0) spaces++;
            continue;
          }
          if (!quoted && (d === ';' || d === '#')) {
            comment = true;
            continue;
          }
          out += ' '.repeat(spaces);
          spaces = 0;
          if (d === '\\') {
            const e = src[i++];
            if (e === '\n') continue;
            const unescaped = { t: '\t', b: '\b', n: '\n', '\\': '\\', '"': '"' }[e ?? ''];
            if (unescaped === undefined) throw bad(`the escape \\${e} is not one git knows`);
            out += unescaped;
          } else if (d === '"') {
            quoted = !quoted;
          } else {
            out += d;
          }
        }
        value = out;
      } else if (i < src.length && src[i] !== '\n') {
        // git's get_value: a key without "=" ends its line, a comment included ("bad config line").
        throw bad(`the key ${JSON.stringify(key)} is followed by neither "=" nor the end of its line`);
      }
      entries.push({ section, subsection, key: key.toLowerCase(), value });
    } else {
      throw bad(`unexpected ${JSON.stringify(c)}`);
    }
  }
  return entries;
}
