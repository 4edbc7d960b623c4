// `npm run test:load`: the e2e suite (or, with --all, the whole `npm test`) while a busy loop holds one of
// the machine's cores, as another CPU-heavy job on a 2-core laptop or CI runner would. A suite that passes
// only on an idle machine waits on timings, not on states: this is how to find out.
//
//   npm run test:load                        vite build, then playwright test
//   npm run test:load -- e2e/pwa.spec.ts --repeat-each 5     the same, with playwright's arguments
//   npm run test:load -- --all               npm test (check, vitest, build, playwright)
//
// The loop runs pinned to the last core (`taskset`, where present), so it takes one core whole rather than
// a share of each; it is stopped however this ends.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

const args = process.argv.slice(2);
const all = args[0] === '--all';
const cores = availableParallelism();
const core = cores - 1;
const loop = ['node', '-e', 'for (;;) {}'];
const pinned = spawnSync('taskset', ['-V']).status === 0;
const burner = spawn(pinned ? 'taskset' : loop[0], pinned ? ['-c', String(core), ...loop] : loop.slice(1), {
  stdio: 'ignore',
});
const stopBurner = () => {
  if (burner.exitCode === null && burner.signalCode === null) burner.kill('SIGKILL');
};
process.on('exit', stopBurner);
console.error(
  `test:load: a busy loop (pid ${burner.pid}) holds ${pinned ? `core ${core}` : 'one core (no taskset: unpinned)'} of ${cores}`,
);

function run(command: string, commandArgs: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child: ChildProcess = spawn(command, commandArgs, { stdio: 'inherit' });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('exit', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

const started = Date.now();
let code: number;
if (all) {
  code = await run('npm', ['test']);
} else {
  code = await run('npx', ['vite', 'build']);
  if (code === 0) code = await run('npx', ['tsx', 'e2e/ensureChromium.ts']);
  if (code === 0) code = await run('npx', ['playwright', 'test', ...args]);
}
stopBurner();
console.error(
  `test:load: ${all ? 'npm test' : 'e2e'} ${code === 0 ? 'passed' : `failed (exit ${code})`} in ${((Date.now() - started) / 1000).toFixed(0)} s under load`,
);
process.exit(code);
