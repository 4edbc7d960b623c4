import { createHash } from 'node:crypto';
import { chmod, lstat, mkdir, readdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type FS from '@isomorphic-git/lightning-fs';
import { git as gitCli } from './git.ts';

/** One entry of a working tree, as a checkout must leave it: kind (with the executable bit), bytes, link target. */
export interface WorktreeEntry {
  path: string;
  kind: 'dir' | 'file' | 'executable' | 'symlink';
  /** SHA-1 of a file's bytes. */
  sha1?: string;
  /** A symlink's target, as readlink gives it. */
  target?: string;
}

const sha1 = (bytes: Uint8Array) => createHash('sha1').update(bytes).digest('hex');

/** Every entry below `/` of a repo's lightning-fs, except the git directory `/.git`, sorted by path. */
export async function readLightningWorktree(fs: FS): Promise<WorktreeEntry[]> {
  const p = fs.promises;
  const out: WorktreeEntry[] = [];
  const walk = async (dir: string) => {
    for (const name of await p.readdir(dir)) {
      const full = dir === '/' ? `/${name}` : `${dir}/${name}`;
      if (full === '/.git') continue;
      const path = full.slice(1);
      const st = await p.lstat(full);
      if (st.isSymbolicLink()) {
        out.push({ path, kind: 'symlink', target: await p.readlink(full) });
      } else if (st.isDirectory()) {
        out.push({ path, kind: 'dir' });
        await walk(full);
      } else {
        const kind = st.mode & 0o111 ? 'executable' : 'file';
        out.push({ path, kind, sha1: sha1((await p.readFile(full)) as Uint8Array) });
      }
    }
  };
  await walk('/');
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Copies the working tree (not `/.git`) out of lightning-fs onto disk: files, executable bits, symlinks. */
export async function exportWorktree(fs: FS, to: string): Promise<void> {
  const p = fs.promises;
  const walk = async (dir: string, dest: string) => {
    await mkdir(dest, { recursive: true });
    for (const name of await p.readdir(dir)) {
      const full = dir === '/' ? `/${name}` : `${dir}/${name}`;
      if (full === '/.git') continue;
      const st = await p.lstat(full);
      const target = join(dest, name);
      if (st.isSymbolicLink()) await symlink(await p.readlink(full), target);
      else if (st.isDirectory()) await walk(full, target);
      else {
        await writeFile(target, (await p.readFile(full)) as Uint8Array);
        if (st.mode & 0o111) await chmod(target, 0o755);
      }
    }
  };
  await walk('/', to);
}

/** The same listing of a working tree on disk (git's), skipping its `.git`. */
export async function readDiskWorktree(root: string): Promise<WorktreeEntry[]> {
  const out: WorktreeEntry[] = [];
  const walk = async (rel: string) => {
    for (const name of await readdir(join(root, rel))) {
      const path = rel ? `${rel}/${name}` : name;
      if (path === '.git') continue;
      const full = join(root, path);
      const st = await lstat(full);
      if (st.isSymbolicLink()) {
        out.push({ path, kind: 'symlink', target: await readlink(full) });
      } else if (st.isDirectory()) {
        out.push({ path, kind: 'dir' });
        await walk(path);
      } else {
        out.push({ path, kind: st.mode & 0o111 ? 'executable' : 'file', sha1: sha1(await readFile(full)) });
      }
    }
  };
  await walk('');
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

const checkouts = new Map<string, Promise<WorktreeEntry[]>>();

/** What `git checkout <commit>` of the bare repository `bare` puts in a working tree (cached per commit). */
export function gitCheckoutOf(bare: string, commit: string, scratch: string): Promise<WorktreeEntry[]> {
  const key = `${bare}\0${commit}`;
  let listing = checkouts.get(key);
  if (!listing) {
    listing = (async () => {
      const dir = join(scratch, `oracle-${commit}-${checkouts.size}`);
      await gitCli(['clone', '-q', '--no-checkout', bare, dir]);
      await gitCli(['-c', 'advice.detachedHead=false', 'checkout', '-q', '--detach', commit], { cwd: dir });
      return readDiskWorktree(dir);
    })();
    checkouts.set(key, listing);
  }
  return listing;
}

/** `git ls-tree -r` of a commit: path to `{mode, type, oid}`. */
export async function lsTree(
  bare: string,
  commit: string,
): Promise<Map<string, { mode: string; type: string; oid: string }>> {
  const out = await gitCli(['ls-tree', '-r', '-z', commit], { cwd: bare });
  const entries = new Map<string, { mode: string; type: string; oid: string }>();
  for (const line of out.split('\0')) {
    if (!line) continue;
    const tab = line.indexOf('\t');
    const [mode, type, oid] = line.slice(0, tab).split(' ');
    entries.set(line.slice(tab + 1), { mode, type, oid });
  }
  return entries;
}

/** The distinct blob ids of a commit's tree, sorted. */
export async function treeBlobs(bare: string, commit: string): Promise<string[]> {
  const oids = new Set<string>();
  for (const e of (await lsTree(bare, commit)).values()) if (e.type === 'blob') oids.add(e.oid);
  return [...oids].sort();
}
