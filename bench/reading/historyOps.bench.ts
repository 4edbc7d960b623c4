// The history cells of `bench/run.ts --only history` in Node, for profiling (`node --cpu-prof`) and quick
// before/after timings without a browser: a clone of a fixture (whole history, no blobs) into memory
// storage, the commit-graph git writes for it (`git commit-graph write --split --changed-paths`: the same
// bytes the worker's build writes, without its minutes), then each cell in a fresh engine on the same
// storage (nothing kept from another cell), after an untimed readTree of the folder, as the bench does.
// Each cell prints its wall time and this process's CPU time (the git server's left out): on a busy
// machine the CPU time is the steadier of the two.
// `npx tsx bench/reading/historyOps.bench.ts [fixture=large] [file] [--only fileHistory,blame,lastCommitsFolder]`
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGitServer } from '../../server/gitServer.ts';
import { createEngine, engineContext } from '../../workers/engine/engine.ts';
import { COMMIT_GRAPHS_DIR } from '../../workers/ops/common/commitGraphAccess.ts';
import { memoryStorage } from '../../workers/storage/memory.ts';

const args = process.argv.slice(2);
const onlyAt = args.indexOf('--only');
const only = onlyAt >= 0 ? new Set(args.splice(onlyAt, 2)[1].split(',')) : null;
const profileAt = args.indexOf('--profile');
// A CPU profile of each cell alone (the clone left out), for chrome://inspect or speedscope.
const profileDir = profileAt >= 0 ? args.splice(profileAt, 2)[1] : null;
const fixture = args[0] ?? 'large';
const root = join(import.meta.dirname, '../../.cache/fixtures');
const bare = join(root, `${fixture}.git`);
const git = (cwd: string, ...a: string[]) => execFileSync('git', a, { cwd, encoding: 'utf8' }).trim();

/** The file the bench picks: the one most commits changed. */
function busiestFile(): string {
  const out = git(bare, 'log', '--format=', '--name-only', 'HEAD');
  const counts = new Map<string, number>();
  for (const path of out.split('\n')) if (path) counts.set(path, (counts.get(path) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0][0];
}

const file = args[1] ?? busiestFile();
const folder = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '';
const server = await startGitServer({ root });
const storage = memoryStorage();
const graphDir = mkdtempSync(join(tmpdir(), 'historyOps-'));
try {
  let started = performance.now();
  const first = createEngine({ storage });
  const { repoId } = await first.clone({ url: `${server.url}/${fixture}.git` });
  console.log(`${fixture}: cloned in ${((performance.now() - started) / 1000).toFixed(1)} s; file ${file}`);
  // git's graph of the same commits, put where the worker's build would write it before that build starts.
  git(root, 'clone', '-q', '--bare', '--filter=blob:none', `file://${bare}`, graphDir);
  git(graphDir, 'commit-graph', 'write', '--reachable', '--changed-paths', '--split');
  const fs = engineContext(first).store.repoFs.open(repoId).promises;
  await fs.mkdir(COMMIT_GRAPHS_DIR).catch(() => undefined);
  for (const name of readdirSync(join(graphDir, 'objects/info/commit-graphs'))) {
    await fs.writeFile(
      `${COMMIT_GRAPHS_DIR}/${name}`,
      readFileSync(join(graphDir, 'objects/info/commit-graphs', name)),
    );
  }
  await engineContext(first).store.repoFs.flush(repoId);
  const status = await first.repo(repoId).commitGraphStatus();
  console.log(`commit-graph: ${status.commits} commits, ${status.layers} layer(s)`);
  const ref = 'HEAD';
  const cells: [string, string, (e: ReturnType<typeof createEngine>) => Promise<string>][] = [
    [
      'fileHistory',
      folder,
      async (e) => {
        const page = await e.repo(repoId).fileHistory({ ref, path: file, skip: 0, limit: 50 });
        return `${page.entries.length} entries`;
      },
    ],
    [
      'blame',
      folder,
      async (e) => {
        const r = await e.repo(repoId).blame({ ref, path: file });
        return `${r.lines.length} lines, ${r.versionsFetched} versions in ${r.requests} requests`;
      },
    ],
    [
      'lastCommitsRoot',
      '',
      async (e) => {
        const r = await e.repo(repoId).lastCommits({ ref, path: '' });
        return `${Object.keys(r.entries).length} entries`;
      },
    ],
    [
      'lastCommitsFolder',
      folder,
      async (e) => {
        const r = await e.repo(repoId).lastCommits({ ref, path: folder });
        return `${Object.keys(r.entries).length} entries`;
      },
    ],
  ];
  for (const [name, from, run] of cells) {
    if (only && !only.has(name)) continue;
    const engine = createEngine({ storage });
    await engine.repo(repoId).readTree({ ref, path: from });
    const session = profileDir ? new Session() : null;
    if (session) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    }
    started = performance.now();
    const cpu = process.cpuUsage();
    const what = await run(engine);
    const ms = performance.now() - started;
    const { user, system } = process.cpuUsage(cpu);
    if (session && profileDir) {
      const { profile } = await session.post('Profiler.stop');
      mkdirSync(profileDir, { recursive: true });
      writeFileSync(join(profileDir, `${name}.cpuprofile`), JSON.stringify(profile));
      session.disconnect();
    }
    console.log(
      `${name.padEnd(18)} ${(ms / 1000).toFixed(2)} s, CPU ${((user + system) / 1e6).toFixed(2)} s (${what})`,
    );
  }
} finally {
  rmSync(graphDir, { recursive: true, force: true });
  await server.close();
}
process.exit(0);
