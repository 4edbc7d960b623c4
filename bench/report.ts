import type { PhaseStats } from './countingRelay.ts';

/** One contender phase of one run: wall seconds and what the relay counted. null seconds: not measured. */
export interface PhaseSample {
  s: number | null;
  stats: PhaseStats;
}

/** Everything measured for one repository in one run (one pass over the contenders). */
export interface RunSample {
  run: number;
  order: string[];
  git?: { cloneNoBlobs: PhaseSample; checkout: PhaseSample; fullClone: PhaseSample };
  isogit?: { clone: PhaseSample; finished: boolean; error?: string; peakHeapMB: number | null };
  blobless?: {
    cloneNoBlobs: PhaseSample;
    checkout: PhaseSample;
    openOneFile: PhaseSample;
    /** Absent in results from before the widget. */
    embedOneFile?: PhaseSample;
    noopFetch: PhaseSample;
    /** git blame of openOneFile's file, right after it was opened cold (its other versions not stored). */
    blame?: PhaseSample;
    /** The longest main-thread task while Blobless cloned and checked out, in ms (0: none over 50 ms). */
    longestMainTaskMs?: number | null;
    peakHeapMB: number | null;
    clonePeakHeapMB?: number | null;
    checkoutPeakHeapMB?: number | null;
    /** From a fresh profile's clone start to the README's bytes (depth-1 clone, then the README's blob). */
    firstView?: PhaseSample;
    /** The built app opened at `?repo=<url>` in a fresh profile: from navigation to the repository shown. */
    deepLinkCold?: PhaseSample;
    /** `--profile` only: where the clone's time went, in ms (see ProfileSample). */
    profile?: ProfileSample;
  };
}

/**
 * `--profile`: the fixed costs of a clone in a fresh profile, in ms. Startup is the page's clock (from
 * navigation); the clone's steps are the worker's User Timing measures (workers/ops/common/timeline.ts).
 */
export interface ProfileSample {
  /** Navigation to the page's module running (HTML, the bench script's download, parse and evaluation). */
  pageLoad: number;
  /** `new Worker` to the worker's modules evaluated (its script's download, parse, evaluation). */
  workerStart: number | null;
  /**
   * The app's start-up calls (src/startup.ts) sent to the ones the home view waits for answered: the
   * registry opened in IndexedDB (created, in a fresh profile) and the storage checked.
   */
  firstCall: number;
  /** The ingester's warm-up (api.warmUp, the last start-up call), from the start-up calls to its end. */
  warmUp: number;
  /** Whether the warm-up ran to its end (else an operation stopped it). */
  warmUpDone: boolean;
  /** The clone's steps in the order they ran: name and ms. Steps may overlap (see clone.ts). */
  steps: { name: string; ms: number }[];
  /** The same steps for the first view's depth-1 clone. */
  firstViewSteps?: { name: string; ms: number }[];
  /** The checkout of the clone's result, step by step (workers/ops/worktree/checkout.ts). */
  checkoutSteps?: { name: string; ms: number }[];
}

/** The stable shape outside checks read (bench/README.md documents every key and unit). */
export interface RepoResult {
  name: string;
  url: string;
  /** The path openOneFile reads. */
  file: string;
  runs: number;
  git: {
    cloneNoBlobs_s: number | null;
    cloneNoBlobs_bytes: number | null;
    cloneNoBlobs_requests: number | null;
    checkout_s: number | null;
    checkout_bytes: number | null;
    checkout_requests: number | null;
    fullClone_s: number | null;
    fullClone_bytes: number | null;
    fullClone_requests: number | null;
  };
  isogit: {
    clone_s: number | null;
    clone_bytes: number | null;
    clone_requests: number | null;
    finished: boolean;
    cap_s: number;
    peakHeapMB: number | null;
  };
  blobless: {
    cloneNoBlobs_s: number | null;
    cloneNoBlobs_bytes: number | null;
    cloneNoBlobs_requests: number | null;
    checkout_s: number | null;
    checkout_bytes: number | null;
    checkout_requests: number | null;
    openOneFile_s: number | null;
    openOneFile_bytes: number | null;
    openOneFile_requests: number | null;
    embedOneFile_s: number | null;
    embedOneFile_bytes: number | null;
    embedOneFile_requests: number | null;
    noopFetch_s: number | null;
    noopFetch_bytes: number | null;
    noopFetch_requests: number | null;
    blame_s: number | null;
    blame_bytes: number | null;
    blame_requests: number | null;
    peakHeapMB: number | null;
    longestMainTaskMs: number | null;
    /** Peak over the clone alone, and over the checkout alone (the working tree is held until its commit). */
    clonePeakHeapMB: number | null;
    checkoutPeakHeapMB: number | null;
    /** clonePeakHeapMB over the clone's pack (the clone's bytes): the issue's "under 2× the pack". */
    clonePeakOverPack: number | null;
    firstView_s: number | null;
    firstView_bytes: number | null;
    firstView_requests: number | null;
    deepLinkCold_s: number | null;
    deepLinkCold_bytes: number | null;
    deepLinkCold_requests: number | null;
  };
  ratios: {
    cloneNoBlobs: number | null;
    checkout: number | null;
    bytes: number | null;
    isogitOverBlobless: number | null;
    /** True when isomorphic-git hit its cap: the ratio is then at least this. */
    isogitOverBlobless_isLowerBound: boolean;
    /** The widget's bytes for one file over a blob:none clone's (target < 0.01). */
    embedOverCloneBytes: number | null;
    /** Blobless's first view over the git CLI's blob:none clone plus checkout (what git needs to show a file). */
    firstViewOverGit: number | null;
    /** isomorphic-git's clone over Blobless's first view (target ≥ 10). */
    isogitOverBlobless_firstView: number | null;
    /** The deep link's time to the repository shown over the git CLI's blob:none clone plus checkout. */
    deepLinkColdOverGit: number | null;
  };
  /** `--profile` only: each clone step's median ms over the runs. */
  profile?: {
    pageLoad: number | null;
    workerStart: number | null;
    firstCall: number | null;
    warmUp: number | null;
    /** In how many of the runs the warm-up ran to its end before an operation stopped it. */
    warmUpDone: number;
    steps: Record<string, number | null>;
    firstViewSteps: Record<string, number | null>;
    checkoutSteps: Record<string, number | null>;
  };
  notes: string[];
  samples: RunSample[];
}

export function median(values: (number | null | undefined)[]): number | null {
  const xs = values.filter((v): v is number => typeof v === 'number').sort((a, b) => a - b);
  if (xs.length === 0) return null;
  const mid = Math.floor(xs.length / 2);
  return xs.length % 2 === 1 ? xs[mid] : (xs[mid - 1] + xs[mid]) / 2;
}

function ratio(a: number | null, b: number | null): number | null {
  return a === null || b === null || b === 0 ? null : round(a / b, 2);
}

function sum(...xs: (number | null)[]): number | null {
  return xs.some((x) => x === null) ? null : xs.reduce<number>((t, x) => t + (x as number), 0);
}

function round(x: number | null, digits: number): number | null {
  if (x === null) return null;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Medians over the runs of a phase's seconds, bytes and requests; null where the phase was not measured. */
function phaseMedians(samples: (PhaseSample | undefined)[]) {
  const measured = samples.filter((p): p is PhaseSample => p !== undefined && p.s !== null);
  return {
    s: round(median(measured.map((p) => p.s)), 3),
    bytes: median(measured.map((p) => p.stats.bytesSent)),
    requests: median(measured.map((p) => p.stats.requests)),
  };
}

export function summarize(
  repo: { name: string; url: string; file: string; isoCapS: number },
  samples: RunSample[],
  notes: string[],
): RepoResult {
  const g = {
    clone: phaseMedians(samples.map((r) => r.git?.cloneNoBlobs)),
    checkout: phaseMedians(samples.map((r) => r.git?.checkout)),
    full: phaseMedians(samples.map((r) => r.git?.fullClone)),
  };
  const iso = phaseMedians(samples.map((r) => r.isogit?.clone));
  const isoRuns = samples.filter((r) => r.isogit !== undefined);
  const isoFinished = isoRuns.length > 0 && isoRuns.every((r) => r.isogit!.finished);
  const b = {
    clone: phaseMedians(samples.map((r) => r.blobless?.cloneNoBlobs)),
    checkout: phaseMedians(samples.map((r) => r.blobless?.checkout)),
    open: phaseMedians(samples.map((r) => r.blobless?.openOneFile)),
    embed: phaseMedians(samples.map((r) => r.blobless?.embedOneFile)),
    fetch: phaseMedians(samples.map((r) => r.blobless?.noopFetch)),
    blame: phaseMedians(samples.map((r) => r.blobless?.blame)),
    firstView: phaseMedians(samples.map((r) => r.blobless?.firstView)),
    deepLink: phaseMedians(samples.map((r) => r.blobless?.deepLinkCold)),
  };
  const profiles = samples.map((r) => r.blobless?.profile).filter((p): p is ProfileSample => !!p);
  const stepNames = [...new Set(profiles.flatMap((p) => p.steps.map((st) => st.name)))];
  const stepMedians = (
    names: string[],
    pick: (p: ProfileSample) => { name: string; ms: number }[] | undefined,
  ) =>
    Object.fromEntries(
      names.map((name) => [
        name,
        round(median(profiles.map((p) => pick(p)?.find((st) => st.name === name)?.ms)), 1),
      ]),
    );
  const checkoutNames = [...new Set(profiles.flatMap((p) => (p.checkoutSteps ?? []).map((st) => st.name)))];
  const bloblessToCheckout = sum(b.clone.s, b.checkout.s);
  return {
    name: repo.name,
    url: repo.url,
    file: repo.file,
    runs: samples.length,
    git: {
      cloneNoBlobs_s: g.clone.s,
      cloneNoBlobs_bytes: g.clone.bytes,
      cloneNoBlobs_requests: g.clone.requests,
      checkout_s: g.checkout.s,
      checkout_bytes: g.checkout.bytes,
      checkout_requests: g.checkout.requests,
      fullClone_s: g.full.s,
      fullClone_bytes: g.full.bytes,
      fullClone_requests: g.full.requests,
    },
    isogit: {
      clone_s: iso.s,
      clone_bytes: iso.bytes,
      clone_requests: iso.requests,
      finished: isoFinished,
      cap_s: repo.isoCapS,
      peakHeapMB: round(median(samples.map((r) => r.isogit?.peakHeapMB)), 1),
    },
    blobless: {
      cloneNoBlobs_s: b.clone.s,
      cloneNoBlobs_bytes: b.clone.bytes,
      cloneNoBlobs_requests: b.clone.requests,
      checkout_s: b.checkout.s,
      checkout_bytes: b.checkout.bytes,
      checkout_requests: b.checkout.requests,
      openOneFile_s: b.open.s,
      openOneFile_bytes: b.open.bytes,
      openOneFile_requests: b.open.requests,
      embedOneFile_s: b.embed.s,
      embedOneFile_bytes: b.embed.bytes,
      embedOneFile_requests: b.embed.requests,
      noopFetch_s: b.fetch.s,
      noopFetch_bytes: b.fetch.bytes,
      noopFetch_requests: b.fetch.requests,
      blame_s: b.blame.s,
      blame_bytes: b.blame.bytes,
      blame_requests: b.blame.requests,
      peakHeapMB: round(median(samples.map((r) => r.blobless?.peakHeapMB)), 1),
      longestMainTaskMs: round(median(samples.map((r) => r.blobless?.longestMainTaskMs)), 0),
      clonePeakHeapMB: round(median(samples.map((r) => r.blobless?.clonePeakHeapMB)), 1),
      checkoutPeakHeapMB: round(median(samples.map((r) => r.blobless?.checkoutPeakHeapMB)), 1),
      clonePeakOverPack: ratio(
        round(median(samples.map((r) => r.blobless?.clonePeakHeapMB)), 1),
        b.clone.bytes === null ? null : b.clone.bytes / 2 ** 20,
      ),
      firstView_s: b.firstView.s,
      firstView_bytes: b.firstView.bytes,
      firstView_requests: b.firstView.requests,
      deepLinkCold_s: b.deepLink.s,
      deepLinkCold_bytes: b.deepLink.bytes,
      deepLinkCold_requests: b.deepLink.requests,
    },
    ratios: {
      cloneNoBlobs: ratio(b.clone.s, g.clone.s),
      checkout: ratio(b.checkout.s, g.checkout.s),
      bytes: ratio(sum(b.clone.bytes, b.checkout.bytes), sum(g.clone.bytes, g.checkout.bytes)),
      isogitOverBlobless: ratio(iso.s, bloblessToCheckout),
      isogitOverBlobless_isLowerBound: !isoFinished,
      embedOverCloneBytes:
        b.embed.bytes === null || !b.clone.bytes ? null : round(b.embed.bytes / b.clone.bytes, 5),
      firstViewOverGit: ratio(b.firstView.s, sum(g.clone.s, g.checkout.s)),
      isogitOverBlobless_firstView: ratio(iso.s, b.firstView.s),
      deepLinkColdOverGit: ratio(b.deepLink.s, sum(g.clone.s, g.checkout.s)),
    },
    ...(profiles.length > 0
      ? {
          profile: {
            pageLoad: round(median(profiles.map((p) => p.pageLoad)), 1),
            workerStart: round(median(profiles.map((p) => p.workerStart)), 1),
            firstCall: round(median(profiles.map((p) => p.firstCall)), 1),
            warmUp: round(median(profiles.map((p) => p.warmUp)), 1),
            warmUpDone: profiles.filter((p) => p.warmUpDone).length,
            steps: stepMedians(stepNames, (p) => p.steps),
            firstViewSteps: stepMedians(stepNames, (p) => p.firstViewSteps),
            checkoutSteps: stepMedians(checkoutNames, (p) => p.checkoutSteps),
          },
        }
      : {}),
    notes,
    samples,
  };
}

// ---- the printed table -------------------------------------------------------------------------------

const fmtS = (s: number | null) => (s === null ? '–' : s < 10 ? `${s.toFixed(2)} s` : `${s.toFixed(1)} s`);

export function fmtBytes(n: number | null): string {
  if (n === null) return '–';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

function cell(s: number | null, bytes: number | null, requests: number | null): string {
  if (s === null) return 'n/a';
  return `${fmtS(s)} · ${fmtBytes(bytes)} · ${requests ?? '–'} req`;
}

const fmtRatio = (r: number | null, lowerBound = false) =>
  r === null ? 'n/a' : `${lowerBound ? '≥ ' : ''}${r.toFixed(2)}`;

/** Rows (the first is the header) as a Markdown table, columns padded to one width. */
function markdownTable(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => row[c].length)));
  const line = (row: string[]) => `| ${row.map((text, c) => text.padEnd(widths[c])).join(' | ')} |`;
  return [
    line(rows[0]),
    `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`,
    ...rows.slice(1).map(line),
  ].join('\n');
}

/** A Markdown table: one row per measure, contenders side by side, ratios and their targets last. */
export function formatTable(results: RepoResult[]): string {
  const rows: string[][] = [
    ['repo', 'measure', 'git CLI', 'Blobless (Chromium)', 'isomorphic-git (Chromium)', 'ratio', 'target'],
  ];
  for (const r of results) {
    const { git: g, blobless: b, isogit: i, ratios } = r;
    const isoCell =
      i.clone_s === null
        ? 'n/a'
        : `${cell(i.clone_s, i.clone_bytes, i.clone_requests)}${i.finished ? '' : ` (did not finish in ${i.cap_s} s)`}`;
    rows.push(
      [
        r.name,
        'clone without blobs',
        cell(g.cloneNoBlobs_s, g.cloneNoBlobs_bytes, g.cloneNoBlobs_requests),
        cell(b.cloneNoBlobs_s, b.cloneNoBlobs_bytes, b.cloneNoBlobs_requests),
        '',
        `Blobless/git ${fmtRatio(ratios.cloneNoBlobs)}`,
        '≤ 1.5',
      ],
      [
        '',
        'checkout of result',
        cell(g.checkout_s, g.checkout_bytes, g.checkout_requests),
        cell(b.checkout_s, b.checkout_bytes, b.checkout_requests),
        '',
        `Blobless/git ${fmtRatio(ratios.checkout)}`,
        '≤ 1.5',
      ],
      ['', 'bytes, clone + checkout', '', '', '', `Blobless/git ${fmtRatio(ratios.bytes)}`, '≤ 1.0'],
      [
        '',
        'full clone (with checkout)',
        cell(g.fullClone_s, g.fullClone_bytes, g.fullClone_requests),
        '',
        isoCell,
        `isomorphic-git/Blobless to a checkout ${fmtRatio(ratios.isogitOverBlobless, ratios.isogitOverBlobless_isLowerBound)}`,
        '≥ 10',
      ],
      [
        '',
        `open one file, cold (${r.file})`,
        '',
        cell(b.openOneFile_s, b.openOneFile_bytes, b.openOneFile_requests),
        '',
        '',
        '',
      ],
      [
        '',
        'embed one file, cold (widget)',
        '',
        cell(b.embedOneFile_s, b.embedOneFile_bytes, b.embedOneFile_requests),
        '',
        `bytes / clone without blobs ${ratios.embedOverCloneBytes === null ? 'n/a' : `${(ratios.embedOverCloneBytes * 100).toFixed(2)} %`}`,
        '< 1 %',
      ],
      [
        '',
        'first view, cold (tree and README)',
        '',
        cell(b.firstView_s, b.firstView_bytes, b.firstView_requests),
        '',
        `Blobless/git clone+checkout ${fmtRatio(ratios.firstViewOverGit)}; isomorphic-git/Blobless ${fmtRatio(ratios.isogitOverBlobless_firstView, ratios.isogitOverBlobless_isLowerBound)}`,
        '< 1.5 s; ≥ 10',
      ],
      [
        '',
        'deep link, cold (the app at ?repo=, to the tree shown)',
        '',
        cell(b.deepLinkCold_s, b.deepLinkCold_bytes, b.deepLinkCold_requests),
        '',
        `Blobless/git clone+checkout ${fmtRatio(ratios.deepLinkColdOverGit)}`,
        '',
      ],
      ['', 'no-op fetch', '', cell(b.noopFetch_s, b.noopFetch_bytes, b.noopFetch_requests), '', '', ''],
      [
        '',
        `blame of ${r.file}, after opening it cold`,
        '',
        cell(b.blame_s, b.blame_bytes, b.blame_requests),
        '',
        '',
        '',
      ],
      [
        '',
        'worker peak JS heap',
        '',
        b.peakHeapMB === null
          ? 'n/a'
          : `${b.peakHeapMB.toFixed(1)} MB (clone ${b.clonePeakHeapMB?.toFixed(1) ?? 'n/a'}, ${fmtRatio(b.clonePeakOverPack, false)} its pack; checkout ${b.checkoutPeakHeapMB?.toFixed(1) ?? 'n/a'})`,
        i.peakHeapMB === null ? 'n/a' : `${i.peakHeapMB.toFixed(1)} MB`,
        '',
        '',
      ],
      [
        '',
        'longest main-thread task, clone + checkout',
        '',
        b.longestMainTaskMs === null ? 'n/a' : `${b.longestMainTaskMs} ms`,
        '',
        '',
        '< 100 ms',
      ],
    );
  }
  return markdownTable(rows);
}

/** `--profile`: a clone's fixed costs per repository, one column each, medians in ms. */
export function formatProfile(results: RepoResult[]): string {
  const withProfile = results.filter((r) => r.profile);
  if (withProfile.length === 0) return '';
  const names = [...new Set(withProfile.flatMap((r) => Object.keys(r.profile!.steps)))];
  const checkoutNames = [...new Set(withProfile.flatMap((r) => Object.keys(r.profile!.checkoutSteps)))];
  const ms = (x: number | null | undefined) => (x === null || x === undefined ? '–' : `${x.toFixed(1)} ms`);
  const rows = [
    ['step (ms, median)', ...withProfile.map((r) => r.name)],
    ['page load (navigation to script running)', ...withProfile.map((r) => ms(r.profile!.pageLoad))],
    ['worker start (new Worker to modules evaluated)', ...withProfile.map((r) => ms(r.profile!.workerStart))],
    [
      'start-up calls (registry opened, storage checked)',
      ...withProfile.map((r) => ms(r.profile!.firstCall)),
    ],
    [
      'warm-up of the ingester (start-up call, to its end; runs that finished it)',
      ...withProfile.map((r) => `${ms(r.profile!.warmUp)} (${r.profile!.warmUpDone} of ${r.runs})`),
    ],
    ...names.map((name) => [`clone: ${name}`, ...withProfile.map((r) => ms(r.profile!.steps[name]))]),
    ...names.map((name) => [
      `first view's depth-1 clone: ${name}`,
      ...withProfile.map((r) => ms(r.profile!.firstViewSteps[name])),
    ]),
    ...checkoutNames.map((name) => [
      `checkout: ${name}`,
      ...withProfile.map((r) => ms(r.profile!.checkoutSteps[name])),
    ]),
  ];
  return markdownTable(rows);
}
