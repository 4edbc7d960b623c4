// Builds (once) and caches the benchmark packs: a synthetic history shaped like a mid-sized source repo,
// written with `git fast-import`, delta-compressed with `git repack`, then served as packs the way
// upload-pack would (`pack-objects --revs --delta-base-offset`), with and without blobs.
//
// Shape (loosely git.git's): a few thousand text files in wide directories (so trees are tens of KB and
// every commit rewrites a few of them), commits that change a few lines of one to four files, an
// occasional new file, a few binary blobs, an annotated tag every 500 commits.

import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export interface BenchPacks {
  dir: string;
  full: string;
  blobless: string;
}

const COMMITS = 20_000;
const VERSION = 'v1'; // bump when the shape changes, to rebuild the cache

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    // xorshift32
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
}

function generateStream(path: string): void {
  const rnd = prng(20240601);
  const int = (n: number) => Math.floor(rnd() * n);
  const letters = 'abcdefghijklmnopqrstuvwxyz_';
  const vocab: string[] = [];
  for (let i = 0; i < 6000; i++) {
    let w = '';
    const len = 3 + int(10);
    for (let k = 0; k < len; k++) w += letters[int(letters.length)];
    vocab.push(w);
  }
  const hex = () => {
    let h = '';
    for (let k = 0; k < 40; k++) h += '0123456789abcdef'[int(16)];
    return h;
  };
  const line = (): string => {
    const indent = '\t'.repeat(int(4));
    const r = rnd();
    if (r < 0.08) return `${indent}/* ${hex()} ${vocab[int(vocab.length)]} */`;
    if (r < 0.15) return '';
    const n = 2 + int(8);
    const parts: string[] = [];
    for (let k = 0; k < n; k++) parts.push(vocab[int(vocab.length)]);
    const ops = [' = ', '(', ', ', ' + ', '->', ' && ', ' '];
    let s = indent + parts[0];
    for (let k = 1; k < n; k++) s += ops[int(ops.length)] + parts[k];
    return `${s}${rnd() < 0.5 ? ';' : ')'} ${int(100000)}`;
  };
  const fileOfLines = (lines: number) => Array.from({ length: lines }, line);

  // Directories and their files (wide, like Documentation/ and t/).
  const dirs: [string, number][] = [
    ['', 80],
    ['Documentation/', 700],
    ['t/', 1000],
    ['builtin/', 150],
    ['compat/', 60],
    ['compat/win32/', 40],
  ];
  for (let i = 0; i < 10; i++) dirs.push([`src/mod${i}/`, 100]);
  const files = new Map<string, string[]>();
  const names: string[] = [];
  for (const [dir, count] of dirs) {
    for (let i = 0; i < count; i++) {
      const name = `${dir}${vocab[int(vocab.length)]}-${i}.${['c', 'h', 'txt', 'sh'][int(4)]}`;
      files.set(name, fileOfLines(20 + int(300)));
      names.push(name);
    }
  }
  const binaries: string[] = [];
  const binaryData = new Map<string, Uint8Array>();
  for (let i = 0; i < 6; i++) {
    const name = `assets/blob${i}.bin`;
    const d = new Uint8Array(256 * 1024 + int(512 * 1024));
    for (let k = 0; k < d.length; k++) d[k] = int(256);
    binaryData.set(name, d);
    binaries.push(name);
  }

  const fd = openSync(path, 'w');
  const enc = new TextEncoder();
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const write = (data: string | Uint8Array) => {
    const bytes = typeof data === 'string' ? enc.encode(data) : data;
    pending.push(bytes);
    pendingBytes += bytes.length;
    if (pendingBytes > 4 << 20) flush();
  };
  const flush = () => {
    for (const b of pending) writeSync(fd, b);
    pending = [];
    pendingBytes = 0;
  };
  const blob = (path: string, data: Uint8Array) => {
    write(`M 100644 inline ${path}\ndata ${data.length}\n`);
    write(data);
    write('\n');
  };
  const authors = ['Ada Lovelace <ada@example.com>', 'Linus T <lt@example.org>', 'Junio H <jh@example.net>'];
  let time = 1_500_000_000;
  // Hot files change more often (a Zipf-like pick).
  const pick = () => names[Math.floor(names.length * rnd() ** 2.5)];
  for (let c = 1; c <= COMMITS; c++) {
    time += 600 + int(7200);
    const author = authors[int(authors.length)];
    const msg = `${vocab[int(vocab.length)]}: ${fileOfLines(1)[0].trim()}\n\n${fileOfLines(1 + int(5)).join('\n')}\n`;
    write(`commit refs/heads/main\nmark :${c}\n`);
    write(`author ${author} ${time} +0000\ncommitter ${author} ${time} +0000\n`);
    const m = enc.encode(msg);
    write(`data ${m.length}\n`);
    write(m);
    write('\n');
    if (c === 1) {
      for (const name of names) blob(name, enc.encode(`${files.get(name)!.join('\n')}\n`));
      for (const name of binaries) blob(name, binaryData.get(name)!);
    } else {
      const changes = 1 + int(4);
      for (let k = 0; k < changes; k++) {
        const name = pick();
        const lines = files.get(name)!;
        const edits = 1 + int(4);
        for (let e = 0; e < edits; e++) {
          const at = int(lines.length + 1);
          const r = rnd();
          if (r < 0.5 && lines.length > 0) lines[Math.min(at, lines.length - 1)] = line();
          else if (r < 0.8) lines.splice(at, 0, ...fileOfLines(1 + int(3)));
          else if (lines.length > 5) lines.splice(at, 1 + int(2));
        }
        blob(name, enc.encode(`${lines.join('\n')}\n`));
      }
      if (rnd() < 0.05) {
        const dir = dirs[int(dirs.length)][0];
        const name = `${dir}${vocab[int(vocab.length)]}-n${c}.c`;
        files.set(name, fileOfLines(20 + int(200)));
        names.push(name);
        blob(name, enc.encode(`${files.get(name)!.join('\n')}\n`));
      }
      if (c % 1000 === 0) {
        const name = binaries[int(binaries.length)];
        const d = binaryData.get(name)!;
        for (let k = 0; k < 2000; k++) d[int(d.length)] = int(256);
        blob(name, d);
      }
    }
    write('\n');
    if (c % 500 === 0) {
      const t = enc.encode(`release ${c / 500}\n`);
      write(`tag v${c / 500}\nfrom :${c}\ntagger ${author} ${time} +0000\ndata ${t.length}\n`);
      write(t);
      write('\n');
    }
  }
  flush();
  closeSync(fd);
}

function git(cwd: string, args: string[], input?: string, stdoutFile?: string): string {
  const out = execFileSync('git', args, {
    cwd,
    input,
    maxBuffer: 1 << 30,
    stdio: ['pipe', stdoutFile ? openSync(stdoutFile, 'w') : 'pipe', 'inherit'],
  });
  return out ? out.toString() : '';
}

/** Returns the cached benchmark packs, building them first if needed (a few minutes). */
export function benchPacks(root: string): BenchPacks {
  const dir = join(root, '.cache', 'packbench', VERSION);
  const full = join(dir, 'full.pack');
  const blobless = join(dir, 'blobless.pack');
  if (existsSync(full) && existsSync(blobless)) return { dir, full, blobless };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const repo = join(dir, 'repo.git');
  const stream = join(dir, 'history.fi');
  console.error(`building benchmark repository in ${dir} ...`);
  generateStream(stream);
  git(dir, ['init', '-q', '--bare', repo]);
  execFileSync('git', ['fast-import', '--quiet'], {
    cwd: repo,
    stdio: [openSync(stream, 'r'), 'inherit', 'inherit'],
  });
  rmSync(stream);
  console.error('repacking with deltas ...');
  git(repo, ['repack', '-a', '-d', '-f', '-q', '--window=10', '--depth=50']);
  const tips = git(repo, ['for-each-ref', '--format=%(objectname)']);
  const packArgs = ['pack-objects', '--revs', '--stdout', '--delta-base-offset', '-q'];
  git(repo, packArgs, tips, full);
  git(repo, [...packArgs, '--filter=blob:none'], tips, blobless);
  return { dir, full, blobless };
}
