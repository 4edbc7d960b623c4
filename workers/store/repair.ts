// Startup repair: what a worker terminated mid-write (a tab closed, a crash) can leave, found and put right
// once when a worker starts. Every operation commits its files in one IndexedDB transaction and writes the
// registry record after (see docs/ARCHITECTURE.md, "Atomic operations"), so what is left is one of:
// a database no record names (a clone that died before its record), a record whose database is gone (a
// delete that died half-way), a record behind its repo's HEAD or shallow file (a checkout, commit or
// fetch that died before its record), and, from older versions or other writers, pack files without
// their partners or files whose contents are missing. Repos whose lock is held (an operation, or a clone
// in progress, in another tab) are skipped.

import { isSha1Hex, SHA1_HEX } from '../model/objectId.ts';
import { PackIngester } from '../pack/packIngester.ts';
import { removePackFiles } from './gitDir.ts';
import { PACK_DIR } from './packSet.ts';
import type { RepoRecord } from './registry.ts';
import { GITDIR, type PromiseFs } from './repoFs.ts';
import type { Store } from './store.ts';

/** What startupRepair found and did in every stored repo, for people (a log, a notice). */
export interface RepairReport {
  /** What was deleted or rewritten, one sentence each. */
  removed: string[];
  /** What was found and left, or could not be put right, one sentence each. */
  reported: string[];
}

/** A pack's files in objects/pack (gitrepository-layout): `pack-<id>.pack|.idx|.promisor|.keep`. */
const PACK_FILE_NAME = new RegExp(`^pack-(${SHA1_HEX})\\.(pack|idx|promisor|keep)$`);
const PACK_FILE_PATH = new RegExp(`^/\\.git/objects/pack/pack-(${SHA1_HEX})\\.(pack|idx|promisor|keep)$`);

/** Looks at every stored repo once; see the file comment. Never throws: a failure is reported. */
export async function repairStores(store: Store): Promise<RepairReport> {
  const { registry, locks, repoFs, names } = store;
  const report: RepairReport = { removed: [], reported: [] };
  const databases = await store.storage.listDatabases();
  if (!databases) {
    report.reported.push(
      'This browser cannot list its databases, so leftovers of interrupted clones were not looked for.',
    );
  }
  const records = await registry.list();
  const recorded = new Map(records.map((r) => [r.id, r]));
  const withData = new Set<string>();
  const companions = new Set<string>();
  for (const name of databases ?? []) {
    const db = names.parseRepoDatabase(name);
    if (!db) continue;
    if (db.companion) companions.add(db.repoId);
    else withData.add(db.repoId);
  }

  for (const id of new Set([...withData, ...companions])) {
    if (recorded.has(id)) continue;
    // A clone in progress in another tab holds the lock from before its database exists to its record.
    if (await locks.repoLockInUse(id)) continue;
    const done = await locks
      .tryRepoLock(id, 'repairing', async () => {
        await repoFs.delete(id);
        store.forgetRepo(id);
      })
      .catch((err: unknown) => err);
    if (done === 'busy') continue;
    const dbName = repoFs.dbName(id);
    if (done instanceof Error) report.reported.push(`Could not delete ${dbName}: ${done.message}`);
    else if (withData.has(id)) {
      report.removed.push(`Deleted ${dbName}: an interrupted clone that no repository record names.`);
    } else {
      report.removed.push(`Deleted ${dbName}_lock, left behind by a repository that is gone.`);
    }
  }

  for (const record of records) {
    if (databases && !withData.has(record.id)) {
      if (await locks.repoLockInUse(record.id)) continue;
      await registry.remove(record.id);
      report.removed.push(
        `Removed ${record.name} (${record.url}) from the list: its stored data was gone (an interrupted delete). Clone it again to get it back.`,
      );
      continue;
    }
    const done = await locks
      .tryRepoLock(record.id, 'repairing', () => repairRepo(store, record, report))
      .catch((err: unknown) => err);
    if (done instanceof Error) report.reported.push(`Could not check ${record.name}: ${done.message}`);
  }
  return report;
}

async function repairRepo(store: Store, record: RepoRecord, report: RepairReport): Promise<void> {
  const fs = store.repoFs.open(record.id).promises;
  const label = record.name;
  let packsChanged = false;

  // One walk of the tree: the files whose contents IndexedDB does not hold, and every inode it names.
  const stored = await store.repoFs.backend(record.id).storedInodes();
  const missing: string[] = [];
  const named = new Set<number>();
  await walkFiles(fs, '/', (path, ino, isFile) => {
    named.add(ino);
    if (isFile && !stored.has(ino)) missing.push(path);
  });

  // Contents no file names: a write that stored files ahead of its commit (batchedIdb.ts, STAGE_BYTES) and
  // died before it. The fixes below remove files, whose contents go with them, or write new ones.
  const unnamed = [...stored].filter((ino) => !named.has(ino));
  if (unnamed.length > 0) {
    await store.repoFs.backend(record.id).deleteUnnamed(unnamed);
    report.removed.push(
      `${label}: deleted ${unnamed.length} stored file contents that no file names (left by an interrupted write).`,
    );
  }

  for (const path of missing) {
    const pack = PACK_FILE_PATH.exec(path);
    if (pack?.[2] === 'idx' && (await rebuildIndex(fs, pack[1]))) {
      report.removed.push(`${label}: ${path} was missing its contents; rebuilt it from its pack.`);
      packsChanged = true;
      continue;
    }
    await fs.unlink(path);
    if (pack && pack[2] !== 'promisor' && pack[2] !== 'keep') {
      await removePackFiles(fs, pack[1]);
      packsChanged = true;
      report.removed.push(
        `${label}: ${path} was missing its contents; removed that pack (its objects are fetched again when needed).`,
      );
    } else if (pack?.[2] === 'promisor') {
      await fs.writeFile(path, '', 'utf8');
      report.removed.push(`${label}: ${path} was missing its contents; wrote it again (empty).`);
    } else {
      report.reported.push(
        `${label}: ${path} was missing its contents and was removed from the file tree${path.startsWith(`${GITDIR}/`) ? '' : ' (check it out again to restore it)'}.`,
      );
    }
  }

  // Pack files without their partners: a .pack without its .idx is unreadable, an .idx without its .pack
  // points at nothing.
  let names: string[] = [];
  try {
    names = await fs.readdir(PACK_DIR);
  } catch {
    names = [];
  }
  const byPack = new Map<string, Set<string>>();
  for (const name of names) {
    const m = PACK_FILE_NAME.exec(name);
    if (!m) continue;
    const exts = byPack.get(m[1]) ?? new Set<string>();
    exts.add(m[2]);
    byPack.set(m[1], exts);
  }
  for (const [checksum, exts] of byPack) {
    if (exts.has('pack') && exts.has('idx')) continue;
    await removePackFiles(fs, checksum);
    packsChanged = true;
    const what = exts.has('pack')
      ? 'a pack without its .idx'
      : exts.has('idx')
        ? 'an .idx without its pack'
        : 'a pack marker without its pack';
    report.removed.push(`${label}: removed pack-${checksum} (${what}, left by an interrupted write).`);
  }

  // The record follows HEAD: a checkout that died after committing its files left the record behind.
  const head = await readHead(fs);
  if (head && (head.branch !== record.branch || head.oid !== record.headOid)) {
    await store.registry.update(record.id, (r) => ({ ...r, branch: head.branch, headOid: head.oid }));
    report.removed.push(
      `${label}: the list now shows ${head.branch ?? head.oid.slice(0, 7)}, where HEAD is.`,
    );
  }

  // And says whether the history is whole: a fetch that deepened or unshallowed it and died before its
  // record left the record's `shallow` behind the git directory's shallow file. (The widget's repos are
  // always called shallow: they hold single commits, whatever their shallow file says.)
  const shallowFile = (await fs.readFile(`${GITDIR}/shallow`, 'utf8').catch(() => '')) as string;
  const shallow = shallowFile.trim() !== '';
  if (!record.minimal && record.shallow !== shallow) {
    await store.registry.update(record.id, (r) => ({ ...r, shallow }));
    report.removed.push(
      `${label}: the list now says ${shallow ? 'only part of the history is' : 'the whole history is'} stored.`,
    );
  }

  await fs.flush();
  if (packsChanged) store.forgetRepo(record.id);
}

async function walkFiles(
  fs: PromiseFs,
  dir: string,
  /** Files and symbolic links; `isFile` false for a link (lightning-fs keeps its target in the tree). */
  visit: (path: string, ino: number, isFile: boolean) => void,
): Promise<void> {
  for (const name of await fs.readdir(dir)) {
    const path = `${dir === '/' ? '' : dir}/${name}`;
    const st = await fs.lstat(path);
    if (st.isDirectory()) await walkFiles(fs, path, visit);
    else if (st.isFile() || st.isSymbolicLink()) visit(path, st.ino as number, st.isFile());
  }
}

/** Writes a pack's .idx again from the pack itself, if the pack is whole and its checksum is its name. */
async function rebuildIndex(fs: PromiseFs, checksum: string): Promise<boolean> {
  const base = `${PACK_DIR}/pack-${checksum}`;
  try {
    const pack = (await fs.readFile(`${base}.pack`)) as Uint8Array;
    const ingester = await PackIngester.create({ expectedSizeHint: pack.length });
    ingester.push(pack);
    const result = await ingester.finish();
    if (result.checksum !== checksum) return false;
    await fs.unlink(`${base}.idx`);
    await fs.writeFile(`${base}.idx`, result.idx);
    return true;
  } catch {
    return false;
  }
}

async function readHead(fs: PromiseFs): Promise<{ branch: string | null; oid: string } | undefined> {
  try {
    const head = ((await fs.readFile(`${GITDIR}/HEAD`, 'utf8')) as string).trim();
    if (!head.startsWith('ref: ')) return isSha1Hex(head) ? { branch: null, oid: head } : undefined;
    const ref = head.slice(5);
    const branch = ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null;
    const loose = await fs.readFile(`${GITDIR}/${ref}`, 'utf8').catch(() => undefined);
    let oid = (loose as string | undefined)?.trim();
    if (!oid) {
      const packed = (await fs.readFile(`${GITDIR}/packed-refs`, 'utf8').catch(() => '')) as string;
      oid = packed
        .split('\n')
        .map((l) => l.split(' '))
        .find(([, name]) => name === ref)?.[0];
    }
    return oid && isSha1Hex(oid) ? { branch, oid } : undefined;
  } catch {
    return undefined;
  }
}
