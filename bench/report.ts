import type { PhaseStats } from './countingRelay.ts';

/** One contender phase of one run: wall seconds and what the relay counted. null seconds: not measured. */
export interface PhaseSample {
  s: number | null;
  stats: PhaseStats;
}

/** The history cells of one run (see run.ts measureBloblessHistory and gitCli.ts measureGitHistory). */
export interface HistorySample {
  git?: {
    logFollow: PhaseSample;
    logFollowFirstPage_s: number;
    commitGraphWrite: PhaseSample;
    commitGraphBytes: number;
    logFollowChangedPaths: PhaseSample;
    logFollowFirstPageChangedPaths_s: number;
    followCommits: number;
    blame: PhaseSample;
    blameLines: number;
  };
  blobless?: {
    clone: PhaseSample;
    /** The worker's commit-graph steps summed (null when the worker recorded none). */
    commitGraphBuild_s: number | null;
    /** The same, step by step (workers/ops/maintenance/commitGraphUpdate.ts). */
    commitGraphSteps_s?: Record<string, number>;
    commitGraphWait_s: number;
    graph: { commits: number; layers: number; bytes: number };
    fileHistoryFirstPage: PhaseSample;
    fileHistoryEntries: number;
    blame: PhaseSample;
    blameVersions: number;
    blameLines: number;
    lastCommits: PhaseSample;
    lastCommitsEntries: number;
    lastCommitsFolder: PhaseSample;
    lastCommitsFolderEntries: number;
  };
}

/** Everything measured for one repository in one run (one pass over the contenders). */
export interface RunSample {
  run: number;
  order: string[];
  /** The history cells, unless skipped. */
  history?: HistorySample;
  git?: {
    cloneNoBlobs: PhaseSample;
    checkout: PhaseSample;
    fullClone: PhaseSample;
    /** `git fetch --no-tags` in the full clone, nothing having moved. Absent in results from before it. */
    noopFetch?: PhaseSample;
  };
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
  /** The ingester's warm-up (engine.warmUp, asked when the clone form's URL field is taken), call to end. */
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
  /** The path the history cells read: the file of HEAD that the most commits changed. */
  historyFile?: string;
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
    /** `git fetch --no-tags` with nothing moved: git's floor for checking the branches. */
    noopFetch_s?: number | null;
    noopFetch_bytes?: number | null;
    noopFetch_requests?: number | null;
  } & Partial<GitHistoryCells>;
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
  } & Partial<BloblessHistoryCells>;
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
    /** Blobless's no-op fetch bytes over `git fetch --no-tags`'s (tags followed vs none; both list the branches). */
    noopFetchBytesOverGit?: number | null;
  } & Partial<HistoryRatios>;
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

/** The git CLI's history cells (bench/README.md says what each is). */
export interface GitHistoryCells {
  logFollow_s: number | null;
  logFollowFirstPage_s: number | null;
  commitGraphWrite_s: number | null;
  commitGraph_bytes: number | null;
  logFollowChangedPaths_s: number | null;
  logFollowFirstPageChangedPaths_s: number | null;
  followCommits: number | null;
  blame_s: number | null;
  blame_bytes: number | null;
  blame_requests: number | null;
}

/** Blobless's history cells. */
export interface BloblessHistoryCells {
  historyClone_s: number | null;
  commitGraphBuild_s: number | null;
  commitGraphWait_s: number | null;
  commitGraph_bytes: number | null;
  commitGraphCommits: number | null;
  commitGraphLayers: number | null;
  fileHistoryFirstPage_s: number | null;
  historyBlame_s: number | null;
  historyBlame_bytes: number | null;
  historyBlame_requests: number | null;
  historyBlame_versions: number | null;
  lastCommits_s: number | null;
  lastCommitsFolder_s: number | null;
}

export interface HistoryRatios {
  /** Blobless's blame over git blame's in a blob:none clone. */
  historyBlameOverGit: number | null;
  /** Old versions fetched per blob request by Blobless's blame (target ≥ 10). */
  historyBlameVersionsPerRequest: number | null;
  /** Blobless's first page of file history over `git log --follow -n <page>` with changed-path filters. */
  fileHistoryOverGit: number | null;
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
  repo: { name: string; url: string; file: string; historyFile?: string; isoCapS: number },
  samples: RunSample[],
  notes: string[],
): RepoResult {
  const g = {
    clone: phaseMedians(samples.map((r) => r.git?.cloneNoBlobs)),
    checkout: phaseMedians(samples.map((r) => r.git?.checkout)),
    full: phaseMedians(samples.map((r) => r.git?.fullClone)),
    noop: phaseMedians(samples.map((r) => r.git?.noopFetch)),
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
  const h = summarizeHistory(samples.map((r) => r.history).filter((x): x is HistorySample => !!x));
  return {
    name: repo.name,
    url: repo.url,
    file: repo.file,
    ...(h ? { historyFile: repo.historyFile } : {}),
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
      noopFetch_s: g.noop.s,
      noopFetch_bytes: g.noop.bytes,
      noopFetch_requests: g.noop.requests,
      ...h?.git,
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
      ...h?.blobless,
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
      noopFetchBytesOverGit: ratio(b.fetch.bytes, g.noop.bytes),
      ...h?.ratios,
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

/** The history cells' medians over the runs that measured them; undefined when none did. */
function summarizeHistory(
  runs: HistorySample[],
): { git: GitHistoryCells; blobless: BloblessHistoryCells; ratios: HistoryRatios } | undefined {
  if (runs.length === 0) return undefined;
  const g = runs.map((r) => r.git);
  const b = runs.map((r) => r.blobless);
  const num = (xs: (number | null | undefined)[], digits = 3) => round(median(xs), digits);
  const gitBlame = phaseMedians(g.map((x) => x?.blame));
  const blame = phaseMedians(b.map((x) => x?.blame));
  const versions = median(b.map((x) => (x?.blame.s === null ? null : x?.blameVersions)));
  const git: GitHistoryCells = {
    logFollow_s: phaseMedians(g.map((x) => x?.logFollow)).s,
    logFollowFirstPage_s: num(g.map((x) => x?.logFollowFirstPage_s)),
    commitGraphWrite_s: phaseMedians(g.map((x) => x?.commitGraphWrite)).s,
    commitGraph_bytes: median(g.map((x) => x?.commitGraphBytes)),
    logFollowChangedPaths_s: phaseMedians(g.map((x) => x?.logFollowChangedPaths)).s,
    logFollowFirstPageChangedPaths_s: num(g.map((x) => x?.logFollowFirstPageChangedPaths_s)),
    followCommits: median(g.map((x) => x?.followCommits)),
    blame_s: gitBlame.s,
    blame_bytes: gitBlame.bytes,
    blame_requests: gitBlame.requests,
  };
  const blobless: BloblessHistoryCells = {
    historyClone_s: phaseMedians(b.map((x) => x?.clone)).s,
    commitGraphBuild_s: num(b.map((x) => x?.commitGraphBuild_s)),
    commitGraphWait_s: num(b.map((x) => x?.commitGraphWait_s)),
    commitGraph_bytes: median(b.map((x) => x?.graph.bytes)),
    commitGraphCommits: median(b.map((x) => x?.graph.commits)),
    commitGraphLayers: median(b.map((x) => x?.graph.layers)),
    fileHistoryFirstPage_s: phaseMedians(b.map((x) => x?.fileHistoryFirstPage)).s,
    historyBlame_s: blame.s,
    historyBlame_bytes: blame.bytes,
    historyBlame_requests: blame.requests,
    historyBlame_versions: versions,
    lastCommits_s: phaseMedians(b.map((x) => x?.lastCommits)).s,
    lastCommitsFolder_s: phaseMedians(b.map((x) => x?.lastCommitsFolder)).s,
  };
  return {
    git,
    blobless,
    ratios: {
      historyBlameOverGit: ratio(blobless.historyBlame_s, git.blame_s),
      historyBlameVersionsPerRequest: ratio(versions, blame.requests),
      fileHistoryOverGit: ratio(blobless.fileHistoryFirstPage_s, git.logFollowFirstPageChangedPaths_s),
    },
  };
}

const HISTORY_GROUPS = ['git', 'blobless', 'ratios'] as const;
const HISTORY_KEYS: Record<(typeof HISTORY_GROUPS)[number], readonly string[]> = {
  git: [
    'logFollow_s',
    'logFollowFirstPage_s',
    'commitGraphWrite_s',
    'commitGraph_bytes',
    'logFollowChangedPaths_s',
    'logFollowFirstPageChangedPaths_s',
    'followCommits',
    'blame_s',
    'blame_bytes',
    'blame_requests',
  ],
  blobless: [
    'historyClone_s',
    'commitGraphBuild_s',
    'commitGraphWait_s',
    'commitGraph_bytes',
    'commitGraphCommits',
    'commitGraphLayers',
    'fileHistoryFirstPage_s',
    'historyBlame_s',
    'historyBlame_bytes',
    'historyBlame_requests',
    'historyBlame_versions',
    'lastCommits_s',
    'lastCommitsFolder_s',
  ],
  ratios: ['historyBlameOverGit', 'historyBlameVersionsPerRequest', 'fileHistoryOverGit'],
};

interface ReportLike {
  date: string;
  durationS: number;
  machine: unknown;
  options: unknown;
  repos: RepoResult[];
}

/**
 * `--merge`: the repositories of `fresh` written into the results file `existing` holds, each replacing the
 * one of its name and saying when and how it was measured (`date`, `options`); every other repository and
 * key stays as it was. A run of one size (`--sizes tags`) then leaves the others' cells alone.
 */
export function mergeRepos(existing: unknown, fresh: ReportLike): unknown {
  if (!existing || typeof existing !== 'object' || !Array.isArray((existing as ReportLike).repos))
    return fresh;
  const out = structuredClone(existing) as ReportLike;
  for (const repo of fresh.repos) {
    const entry = { ...repo, date: fresh.date, options: fresh.options };
    const at = out.repos.findIndex((r) => r.name === repo.name);
    if (at >= 0) out.repos[at] = entry;
    else out.repos.push(entry);
  }
  return out;
}

/**
 * `--only history`: the history cells of `fresh` written into the results file `existing` holds, whose
 * other cells, samples and keys stay as they were; the run itself is described under `history`. A
 * repository the file does not have yet is added whole.
 */
export function mergeHistoryCells(existing: unknown, fresh: ReportLike): unknown {
  if (!existing || typeof existing !== 'object' || !Array.isArray((existing as ReportLike).repos))
    return fresh;
  const out = structuredClone(existing) as ReportLike & { history?: unknown };
  out.history = {
    date: fresh.date,
    durationS: fresh.durationS,
    machine: fresh.machine,
    options: fresh.options,
  };
  for (const repo of fresh.repos) {
    const old = out.repos.find((r) => r.name === repo.name) as
      | (RepoResult & { historySamples?: unknown; historyNotes?: string[] })
      | undefined;
    if (!old) {
      out.repos.push(repo);
      continue;
    }
    old.historyFile = repo.historyFile;
    // Sizes may be measured in separate runs: each says when its cells were taken.
    (old as { historyDate?: string }).historyDate = fresh.date;
    for (const group of HISTORY_GROUPS) {
      const from = repo[group] as Record<string, unknown>;
      const to = old[group] as Record<string, unknown>;
      for (const key of HISTORY_KEYS[group]) to[key] = from[key] ?? null;
    }
    old.historySamples = repo.samples.map((r) => ({ run: r.run, history: r.history }));
    old.historyNotes = repo.notes;
  }
  return out;
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
      [
        '',
        'no-op fetch (git: --no-tags)',
        cell(g.noopFetch_s ?? null, g.noopFetch_bytes ?? null, g.noopFetch_requests ?? null),
        cell(b.noopFetch_s, b.noopFetch_bytes, b.noopFetch_requests),
        '',
        `bytes Blobless/git ${fmtRatio(ratios.noopFetchBytesOverGit ?? null)}`,
        '≤ 2.1 KB',
      ],
      [
        '',
        `blame of ${r.file}, after opening it cold`,
        '',
        cell(b.blame_s, b.blame_bytes, b.blame_requests),
        '',
        '',
        '',
      ],
      ...historyRows(r),
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

/** The history cells beside git's, when they were measured. */
function historyRows(r: RepoResult): string[][] {
  if (!r.historyFile) return [];
  const { git: g, blobless: b, ratios } = r;
  const graph =
    b.commitGraph_bytes === null || b.commitGraph_bytes === undefined
      ? 'n/a'
      : `built in ${fmtS(b.commitGraphBuild_s ?? null)}, ${fmtBytes(b.commitGraph_bytes)}, ${b.commitGraphLayers} layers`;
  const gitGraph =
    g.commitGraph_bytes === null || g.commitGraph_bytes === undefined
      ? 'n/a'
      : `written in ${fmtS(g.commitGraphWrite_s ?? null)}, ${fmtBytes(g.commitGraph_bytes)}`;
  const s = (x: number | null | undefined) => fmtS(x ?? null);
  return [
    [
      '',
      `commit-graph with changed paths (${b.commitGraphCommits ?? '–'} commits)`,
      gitGraph,
      graph,
      '',
      '',
      '',
    ],
    [
      '',
      `file history, first page (${r.historyFile})`,
      `log --follow -n 50: ${s(g.logFollowFirstPage_s)}; with the graph ${s(g.logFollowFirstPageChangedPaths_s)}; whole (${g.followCommits ?? '–'} commits) ${s(g.logFollow_s)} / ${s(g.logFollowChangedPaths_s)}`,
      s(b.fileHistoryFirstPage_s),
      '',
      `Blobless/git with the graph ${fmtRatio(ratios.fileHistoryOverGit ?? null)}`,
      '< 1 s on large',
    ],
    [
      '',
      'blame, after the history arrived',
      cell(g.blame_s ?? null, g.blame_bytes ?? null, g.blame_requests ?? null),
      `${cell(b.historyBlame_s ?? null, b.historyBlame_bytes ?? null, b.historyBlame_requests ?? null)} (${b.historyBlame_versions ?? '–'} versions)`,
      '',
      `Blobless/git ${fmtRatio(ratios.historyBlameOverGit ?? null)}; versions per request ${fmtRatio(ratios.historyBlameVersionsPerRequest ?? null)}`,
      '< 5 s on large; ≥ 10 per request',
    ],
    [
      '',
      'last commits of the root; of the file’s folder',
      '',
      `${s(b.lastCommits_s)}; ${s(b.lastCommitsFolder_s)}`,
      '',
      '',
      '< 1 s on large',
    ],
  ];
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
