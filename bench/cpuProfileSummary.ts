/**
 * Summarizes V8 CPU profiles (`.cpuprofile`, as `npm run bench -- --cpu-profile DIR` writes them): the
 * functions with the most self time and the most total time (time in them and what they call, counted once
 * per sample however deep the recursion), as tables in milliseconds.
 *
 *   npx tsx bench/cpuProfileSummary.ts FILE.cpuprofile [...] [--top N]
 *
 * Several files are summed: the same operation's runs, to see past one run's noise.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A function's name and where it is, short enough for a table. */
function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url ? basename(url.split('?')[0]) : '';
  const name = functionName || '(anonymous)';
  return file ? `${name} ${file}:${lineNumber + 1}` : name;
}

export interface ProfileTotals {
  totalMs: number;
  self: Map<string, number>;
  inclusive: Map<string, number>;
}

export function summarize(profiles: CpuProfile[]): ProfileTotals {
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let totalMs = 0;
  for (const profile of profiles) {
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    profile.samples.forEach((id, i) => {
      // A sample's time is the delta to the next one: V8 records when each sample was taken.
      const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
      totalMs += ms;
      const node = byId.get(id);
      if (!node) return;
      const name = frameName(node);
      self.set(name, (self.get(name) ?? 0) + ms);
      const seen = new Set<string>();
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const frame = frameName(byId.get(at)!);
        if (seen.has(frame)) continue;
        seen.add(frame);
        inclusive.set(frame, (inclusive.get(frame) ?? 0) + ms);
      }
    });
  }
  return { totalMs, self, inclusive };
}

function table(title: string, totals: Map<string, number>, top: number, runs: number): string {
  const rows = [...totals].sort((a, b) => b[1] - a[1]).slice(0, top);
  const lines = [`| ${title} | ms per profile |`, '| --- | ---: |'];
  for (const [name, ms] of rows) lines.push(`| ${name.replace(/\|/g, '\\|')} | ${(ms / runs).toFixed(1)} |`);
  return lines.join('\n');
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '25' } },
  });
  if (positionals.length === 0)
    throw new Error('usage: cpuProfileSummary.ts FILE.cpuprofile [...] [--top N]');
  const top = Number(values.top);
  const profiles = positionals.map((f) => JSON.parse(readFileSync(f, 'utf8')) as CpuProfile);
  const totals = summarize(profiles);
  const runs = profiles.length;
  process.stdout.write(
    `${runs} profile(s), ${(totals.totalMs / runs).toFixed(1)} ms sampled per profile\n\n`,
  );
  process.stdout.write(`${table('self time', totals.self, top, runs)}\n\n`);
  process.stdout.write(`${table('total time', totals.inclusive, top, runs)}\n`);
}

main();
