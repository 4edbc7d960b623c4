// @ts-check
// Mutation testing of the engine (issue 26): `npm run mutate`. Settings and why are in README ("Mutation
// testing"). Mutants judged equivalent are listed below with their reason (test/mutation/equivalentMutants.mjs);
// `equivalentSurvivors` lists equivalent mutants left in the score because their node also holds mutants the
// tests kill.

import { resolve } from 'node:path';

// The git server of the ops' tests (MUTATE_GIT_SERVER=1, vitest.mutate.config.ts) serves the worktree's
// fixtures: a sandbox leaves `.cache` out (ignorePatterns), and would build its own for minutes. Test runners
// inherit this process's environment.
process.env.BLOBLESS_FIXTURES_DIR ??= resolve('.cache/fixtures');

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions & { equivalentMutants: { file: string; code: string; reason: string }[]; equivalentSurvivors: { file: string; code: string; mutants: string; reason: string }[] }} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts', related: true },
  // Each mutant runs only the tests that reached it in the first run.
  coverageAnalysis: 'perTest',
  // 2 cores shared by the team.
  concurrency: 1,
  // A re-run mutates only the code (and re-runs only the tests) that changed since the last run on this machine.
  incremental: true,
  incrementalFile: '.cache/stryker/incremental.json',
  // A static mutant (module-level code: message tables, constants) reloads the test environment and runs every
  // test; here they are table texts, and not worth a full suite each.
  ignoreStatic: true,
  mutate: [
    'workers/model/*.ts',
    'workers/wire/*.ts',
    'workers/pack/*.ts',
    'workers/ops/sync/negotiator.ts',
    'workers/transport/*.ts',
    'workers/store/{packedRefs,looseObjects,gitDir,indexFile,gitConfig,packSet,batchedIdb,repoFs,repoLock,repair,registry,storage,credentials,errors,crashPoints,repoEvents,store}.ts',
    'workers/ops/sync/{followedTags,remoteRefNames}.ts',
    'workers/ops/read/blame.ts',
    'workers/ops/read/readFileMinimal.ts',
    'workers/ops/sync/lsRefsCall.ts',
    'workers/ops/sync/{receivePack,fetch}.ts',
    'workers/ops/sync/lazyBlobs.ts',
    'workers/ops/sync/push.ts',
    'workers/ops/worktree/pull.ts',
    'workers/ops/worktree/mergeState.ts',
    'workers/ops/worktree/checkout.ts',
    'workers/ops/worktree/newWorktree.ts',
    '!**/*.test.ts',
  ],
  plugins: ['@stryker-mutator/vitest-runner', './test/mutation/equivalentMutants.mjs'],
  ignorers: ['equivalent'],
  // The busy 2-core machine: a mutant is a timeout only when it runs far past the unmutated time.
  timeoutMS: 10_000,
  timeoutFactor: 2,
  dryRunTimeoutMinutes: 30,
  ignorePatterns: [
    'dist',
    'test-results',
    'playwright-report',
    'e2e/screenshots',
    'reports',
    // The fixtures: the mutated tests do not use them (vitest.mutate.config.ts).
    '.cache',
  ],
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 85, low: 75, break: null },
  equivalentSurvivors: [
    {
      file: 'workers/pack/warmUp.ts',
      code: '(half - SHORT_OP) >>> 8 (delta)',
      mutants: '(half + SHORT_OP) >>> 8',
      reason:
        'the high byte of the second copy: no tree of the warm-up pack has half its size within 7 of a multiple of 256',
    },
    {
      file: 'workers/pack/warmUp.ts',
      code: 'at < TINY_PUSHES_BYTES (pushSize)',
      mutants: 'at <= TINY_PUSHES_BYTES',
      reason: 'one tiny push more at the 24 KiB mark, if a push ends exactly there',
    },
    {
      file: 'workers/ops/sync/refsWarmUp.ts',
      code: "listed.find((r) => r.name === 'HEAD')?.symrefTarget",
      mutants: 'listed.find(r => true); .symrefTarget without ?.',
      reason:
        'HEAD is the first ref of the synthetic answer and is always there, as in every v2 answer git sends',
    },
    {
      file: 'workers/ops/sync/refsWarmUp.ts',
      code: 'refNameProblem(ref.name) !== null',
      mutants: 'false',
      reason:
        'every name of the synthetic answer is one git takes (the test checks none is refused), so none counts',
    },
    {
      file: 'workers/ops/sync/refsWarmUp.ts',
      code: 'at < bytes.length (chunks)',
      mutants: 'at <= bytes.length',
      reason: 'one empty chunk more at the end, which the packet reader takes as nothing',
    },
    {
      file: 'workers/wire/fetchResponse.ts',
      code: "event.type === 'acknowledgments'",
      mutants: 'true',
      reason: 'only an acknowledgments event has a ready field: for the others event.ready is undefined',
    },
    {
      file: 'workers/wire/fetchResponse.ts',
      code: 'space < 0 (wanted-refs, packfile-uris)',
      mutants: 'space <= 0, both',
      reason: 'a line starting with a space has an empty id, which oidIn refuses with the same message',
    },
    {
      file: 'workers/wire/fetchResponse.ts',
      code: 'start < text.length',
      mutants: 'true; start <= text.length',
      reason: 'the piece kept is then empty, and an empty piece adds nothing to the line or the count',
    },
    {
      file: 'workers/wire/fetchResponse.ts',
      code: 'this.#pieces.length === 0',
      mutants: 'false',
      reason: 'a fast path: joining no pieces and the tail gives the tail',
    },
    {
      file: 'workers/pack/treeCheck.ts',
      code: 'isAscii(bytes, space + 1, nul)',
      mutants: 'space - 1; and in isAscii: the body {}, i <= to, the test true, return false',
      reason: 'isAscii only chooses the fast Latin-1 slice: decoding as UTF-8 gives ASCII the same name',
    },
    {
      file: 'workers/pack/treeCheck.ts',
      code: 'a[i] < b[i]',
      mutants: 'a[i] <= b[i]',
      reason: 'it runs only where a[i] !== b[i]',
    },
    {
      file: 'workers/pack/treeCheck.ts',
      code: 'endA < endB',
      mutants: 'endA <= endB',
      reason: 'equal ends are one name of one kind twice, which DUPLICATE_ENTRIES reports first',
    },
    {
      file: 'workers/pack/treeCheck.ts',
      code: 'mayAliasGit (checkName and its body)',
      mutants: '!mayAliasGit(bytes) false; its whole test true; c > 0x80',
      reason:
        'a fast path: a name starting otherwise is none of the dot names; a first byte 0x80 decodes to U+FFFD',
    },
    {
      file: 'workers/pack/treeCheck.ts',
      code: 'c <= 0x5a',
      mutants: 'c < 0x5a',
      reason: '"Z" lowered is "z", in neither "gitmodules" nor "gi7eba"',
    },
    {
      file: 'workers/pack/treeCheck.ts',
      code: 'c === 0 (isNtfsDotGeneric)',
      mutants: 'false',
      reason: 'a NUL (past the end) fails the digit test after "~" and the prefix test before it',
    },
    {
      file: 'workers/pack/treeCheck.ts',
      code: 'i >= 6 || c & 0x80',
      mutants: 'false; i > 6; i >= 6 && c & 0x80',
      reason:
        'the prefix is six ASCII characters: charCodeAt(6) is NaN, and no byte >= 0x80 equals one of them',
    },
    {
      file: 'workers/pack/treeCheck.ts',
      code: 'end > 0 (trimDotsAndSpaces)',
      mutants: 'true; end >= 0',
      reason: 's[-1] is undefined, neither a dot nor a space',
    },
    {
      file: 'workers/pack/treeCheck.ts',
      code: 's.length * 3 <= max; s.length > max (longerThanUtf8)',
      mutants: 'false; < ; and the second false',
      reason: 'fast paths: the byte count below gives the same answer',
    },
    {
      file: 'workers/transport/reachability.ts',
      code: '() => false',
      mutants: '() => undefined',
      reason: 'the probe failed either way: undefined is as falsy as false to the test of `answered`',
    },
    {
      file: 'workers/transport/retryPolicy.ts',
      code: 'err.status === undefined',
      mutants: 'false',
      reason: 'an undefined status is neither 429 nor >= 500, so the test after it answers false too',
    },
    {
      file: 'workers/transport/retryPolicy.ts',
      code: 'ms < 1000',
      mutants: 'ms <= 1000',
      reason: '1000 ms in tenths of a second is "1 s", as in seconds',
    },
    {
      file: 'workers/store/indexFile.ts',
      code: 'i < fields.length; i < 20 (serializeIndex)',
      mutants: 'i <= fields.length; i <= 20',
      reason: 'the extra write lands at +40 or +60, which the object id or the flags written next overwrite',
    },
    {
      file: 'workers/transport/gitHttp.ts',
      code: '/^127\\.\\d+\\.\\d+\\.\\d+$/',
      mutants: 'without ^',
      reason:
        'a host name whose last label is a number is parsed as IPv4 by URL: only 127.x.x.x itself ends so',
    },
    {
      file: 'workers/transport/gitHttp.ts',
      code: "private service: UploadService = 'git-upload-pack'",
      mutants: '""',
      reason: 'infoRefs sets it before the only GETs whose redirect reads it',
    },
    {
      file: 'workers/transport/gitHttp.ts',
      code: '/^https?:\\/\\// (endpoint)',
      mutants: 'without ^',
      reason: 'the target always starts with its scheme, so the first match is at 0 either way',
    },
    {
      file: 'workers/transport/gitHttp.ts',
      code: 'url !== target (discoverWithToken)',
      mutants: 'true',
      reason: 'moving the base to the address it already has changes nothing',
    },
    {
      file: 'workers/transport/gitHttp.ts',
      code: 'byob && into; if (into) (stream)',
      mutants: 'byob || into; true',
      reason: 'into is set exactly when byob is: a default reader never reads into it',
    },
    {
      file: 'workers/transport/gitHttp.ts',
      code: 'finished = true; if (!finished) (stream)',
      mutants: 'false; true',
      reason:
        'cancelling a stream that has ended is a no-op (Streams: ReadableStreamCancel of a closed stream)',
    },
    {
      file: 'workers/ops/sync/followedTags.ts',
      code: 'tagObjects.length === 0',
      mutants: 'false',
      reason: 'a fast path: with no tag objects the loop below finds none either',
    },
    {
      file: 'workers/store/packedRefs.ts',
      code: 'a.name < b.name; a.name > b.name (the sort)',
      mutants: '<=; and the second true, false, >=, <=',
      reason: "names in packed-refs are unique, and V8's sort only asks whether the answer is below 0",
    },
    {
      file: 'workers/store/gitConfig.ts',
      code: 'i < src.length (the loops over a section name and over a comment)',
      mutants: 'i <= src.length',
      reason: 'past the end a section header is unclosed either way, and undefined ends a comment as LF does',
    },
    {
      file: 'workers/store/gitDir.ts',
      code: "(err as { name?: string }).name === 'StoreError' (writeNewGitDir)",
      mutants: 'true; false; ""',
      reason: 'storageError hands a StoreError back as it is, so the test only saves a call',
    },
    {
      file: 'workers/store/gitConfig.ts',
      code: "src[i] ?? ''; e ?? ''",
      mutants: '"Stryker was here!"',
      reason: 'past the end any string that is not a space, or no escape letter, gives the same answer as ""',
    },
    {
      file: 'workers/store/gitDir.ts',
      code: "'branch' in head (writeHead)",
      mutants: 'true',
      reason: 'for a detached HEAD it checks "refs/heads/undefined", a name git accepts',
    },
    {
      file: 'workers/wire/receivePack.ts',
      code: 'const report: Packet[] = [];',
      mutants: '["Stryker was here"]',
      reason: 'readReport steps over anything that is neither a data nor a flush packet',
    },
    {
      file: 'workers/pack/crc32.ts',
      code: 'i <= stop',
      mutants: 'i < stop; false',
      reason: 'a fast path: the byte-at-a-time loop after it computes the same CRC for the bytes it leaves',
    },
    {
      file: 'workers/pack/delta.ts',
      code: 'i < len; i < op',
      mutants: 'i <= len; i <= op',
      reason:
        'the extra byte lands where the next instruction writes, or past the result, where a typed array drops it',
    },
    {
      file: 'workers/pack/growableBuffers.ts',
      code: 'buffer.resizable (receiveBuffer, reservedTable)',
      mutants: 'true, both',
      reason: 'in Node 20, where the tests run, every buffer made with maxByteLength is resizable',
    },
    {
      file: 'workers/pack/growableBuffers.ts',
      code: 'buf.length >= needed',
      mutants: 'true',
      reason: 'the receive view is made without a length, so after a resize it always covers what is needed',
    },
    {
      file: 'workers/pack/growableBuffers.ts',
      code: 'buf.byteOffset === 0',
      mutants: 'true',
      reason: 'a view at an offset is shorter than its buffer, so the length test fails for it anyway',
    },
    {
      file: 'workers/pack/packEntries.ts',
      code: 'v < offset',
      mutants: 'v <= offset',
      reason: 'equality returned just before',
    },
    {
      file: 'workers/pack/packIndex.ts',
      code: 'i < 20 (the checksum loop)',
      mutants: 'i <= 20',
      reason: 'both sides read undefined at 20, which compare equal',
    },
    {
      file: 'workers/pack/packIndex.ts',
      code: 'key[0] === 0',
      mutants: 'true',
      reason: 'searching from 0 covers the bucket as well: the fan-out only narrows the search',
    },
    {
      file: 'workers/pack/packIndex.ts',
      code: 'cmp < 0',
      mutants: 'cmp <= 0',
      reason: 'cmp 0 returned just before',
    },
    {
      file: 'workers/pack/packIndexWriter.ts',
      code: 'n > PREFIX_SORT_MAX',
      mutants: 'true; n >= PREFIX_SORT_MAX',
      reason: 'the comparator sort puts any number of ids in the same order as the prefix sort',
    },
    {
      file: 'workers/pack/packIndexWriter.ts',
      code: 'i < n (four loops); b < 256; start < n',
      mutants: 'i <= n; b <= 256; start <= n',
      reason:
        "a typed array drops writes past its end and reads undefined there; fan-out slot 256 is the first id's bytes, written after",
    },
    {
      file: 'workers/pack/packIndexWriter.ts',
      code: 'end < n && Math.floor(keys[end] / PREFIX_SORT_MAX) === prefix; end - start > 1',
      mutants: '||, true, end <= n; true, >= 1, end + start',
      reason: 'a longer run, or a run of one, sorted whole by the full comparison stays in order',
    },
    {
      file: 'workers/pack/packIndexWriter.ts',
      code: 'if (hasher)',
      mutants: 'false',
      reason: 'the built-in SHA-1 signs the same bytes: the given hasher is only faster',
    },
    {
      file: 'workers/pack/packReader.ts',
      code: 'shift > 2 ** 35',
      mutants: 'shift >= 2 ** 35',
      reason: 'shift is 16 times a power of 128, never 2^35 itself',
    },
    // workers/ops/read/blame.ts (session 5, mutops2): the survivors judged equivalent; the others are in the report.
    {
      file: 'workers/ops/read/blame.ts',
      code: 'if (graph) originsAt.add(graph.position(commit)); if (originsAt.has(position)) break;',
      mutants: 'false; the break removed; true, false',
      reason:
        'stopping a run at a commit with origins only joins suspects there: where lines end depends on the diffs alone',
    },
    {
      file: 'workers/ops/read/blame.ts',
      code: 'passDownRun: position >= 0; parents.length !== 1 || ...; if (!moved) return false; moved = true; return true; if (await passDownRun(o))',
      mutants: 'false, > 0, < 0; true; true; false; false; false',
      reason:
        'a fast path: when the run is not taken, passBlame passes the lines commit by commit to the same place',
    },
    {
      file: 'workers/ops/read/blame.ts',
      code: 'if (!lines.length) return; if (!o.suspects.length) queue.push(...) (give)',
      mutants: 'false; true',
      reason:
        'a commit queued with no suspects, or twice, is popped and skipped: the loop passes only origins with suspects',
    },
    {
      file: 'workers/ops/read/blame.ts',
      code: 'if (!o) (origin); first && unchangedByFilter(o.commit, o.path); i === 0',
      mutants: 'true; false, true, false, i !== 0',
      reason:
        'origin() is called only for a commit and path not known yet; the filter is a fast path of the tree read, and a non-first parent is reached only when the first did not take every line',
    },
    {
      file: 'workers/ops/read/blame.ts',
      code: '!scapegoats.some((s, j) => j < i && s && s.entry.oid === p.entry.oid)',
      mutants:
        'true; every; () => undefined; the whole test false; j <= i (session 13: j < i as true and j >= i are killed, dup/f.js)',
      reason:
        'a fast path: a parent with the blob of an earlier one maps the same lines, which the earlier one already took (every is always false: its last j is never < i; scapegoats[i] is null when j is i)',
    },
    {
      file: 'workers/ops/read/blame.ts',
      code: 'parents.map(() => null); if (onProgress) found.push(...); origins.get(commit)?.values() ?? []; if (o.suspects.length)',
      mutants:
        '() => undefined; true; .values, ["Stryker was here"] (no coverage); true (session 13: onProgress && !commits[o.commit] as true and as || are killed, twice/f.js)',
      reason:
        'undefined is as falsy as null; without a listener nothing reads found; a queued commit always has origins; an origin without suspects passes nothing',
    },
    {
      file: 'workers/ops/read/blame.ts',
      code: "needed.filter((oid) => !contents.has(oid)); (p.status === 'R' || p.status === 'C') && p.new?.path === o.path",
      mutants: 'needed; the status test true; the path test true; p.new.path',
      reason:
        'ensureBlobs asks only for blobs not stored; with singleFollow only pairs into o.path are paired, and an added one has no old side',
    },
    // The rest of the pack (issue 26, session 5): inflate (not run yet), objectHash, warmUp, deflate, errors,
    // releaseBuffer, showName, timeSlice, treeWalk; and packReader's rerun.
    {
      file: 'workers/pack/objectHash.ts',
      code: 't < 16; t < 80 (sha1Block)',
      mutants: 't <= 16; t <= 80',
      reason: 'w[16] is written again by the loop after; w[80] is past the typed array, which drops it',
    },
    {
      file: 'workers/pack/objectHash.ts',
      code: 'this.blockLen > 0; i < n (JsSha1.update)',
      mutants: 'true, this.blockLen >= 0; true, i <= n',
      reason:
        'a fast path: an empty block takes the same bytes through the block buffer; an empty tail sets no bytes',
    },
    {
      file: 'workers/pack/objectHash.ts',
      code: 'bits / 2 ** 32',
      mutants: 'bits * 2 ** 32',
      reason:
        'unreachable, not equivalent: the high word is 0 below 512 MiB, and no file JsSha1 signs (idx, index, commit-graph) nears it',
    },
    {
      file: 'workers/pack/objectHash.ts',
      code: 'i < 20 (oidFromHex)',
      mutants: 'i <= 20',
      reason: 'out[20] is past the typed array, which drops the write',
    },
    {
      file: 'workers/pack/timeSlice.ts',
      code: 'this.channel === made',
      mutants: 'true',
      reason: 'a channel is made only when none is set, so the one closing is always the one set',
    },
    {
      file: 'workers/pack/warmUp.ts',
      code: 'n >= 0x80 (varint)',
      mutants: 'n > 0x80',
      reason: 'no size in the warm-up pack (1.6-2 KB) is 128 at any step of its varint',
    },
    {
      file: 'workers/pack/warmUp.ts',
      code: 'tree(): parts, e < ENTRIES, the name, k < 20; next() and the inserts of warmUpPack',
      mutants: '["Stryker was here"]; e <= ENTRIES; ``; false, k <= 20, k >= 20; {}; () => undefined',
      reason:
        'the bytes of the trees and inserts only need to make a valid pack of distinct trees and chains, which the test checks',
    },
    {
      file: 'workers/pack/warmUp.ts',
      code: 'rounds <= 0; round < rounds; at < pack.length',
      mutants: 'false, rounds < 0; round <= rounds; at <= pack.length',
      reason:
        'cost only: building the pack for no rounds, one round more, or one empty push ingests nothing else (no test times code)',
    },
    {
      file: 'workers/pack/packReader.ts',
      code: 'distance > 2 ** 45; p + 20 > end',
      mutants: 'distance >= 2 ** 45; p + 20 >= end',
      reason:
        'PACK_CORRUPT either way: exactly 2^45 is refused at the next byte or as pointing outside; an id that ends at the trailer leaves no data to inflate',
    },
    {
      file: 'workers/pack/packReader.ts',
      code: 'this.inflater.outPos !== entry.size',
      mutants: 'false',
      reason:
        'INFLATE_DONE already means the declared size was reached: the inflater refuses any other (its trailer)',
    },
    // Issue 26, the rest of the store layer (batchedIdb, repoFs, repoLock, repair, ...): mutstore2, session 5.
    {
      file: 'workers/store/batchedIdb.ts',
      code: 'bytes.byteOffset === 0',
      mutants: 'true',
      reason:
        "a view with byteOffset > 0 cannot have its buffer's whole byteLength: the second test alone decides",
    },
    {
      file: 'workers/store/batchedIdb.ts',
      code: 'if (this.ignoringSaves || this.dead) return Promise.resolve();',
      mutants: 'false; && (saveSuperblock)',
      reason:
        'a fast path: commitNow checks the same flags before it stores anything, and nothing between resets them',
    },
    {
      file: 'workers/store/batchedIdb.ts',
      code: 'this.heldSuperblock === undefined',
      mutants: 'true (whenCommitted)',
      reason:
        'a held superblock exists only while holds > 0 (release clears it before it awaits): holds === 0 decides',
    },
    {
      file: 'workers/store/batchedIdb.ts',
      code: 'this.holds > 0 && this.fresh.has(inode) && !this.dead',
      mutants: 'true && fresh && !dead; holds >= 0 && …',
      reason:
        'fresh holds inodes only within a hold: noteNewInode adds none outside one, and commit, discard and wipe clear it',
    },
    {
      file: 'workers/store/batchedIdb.ts',
      code: "if (this.aheadError !== null) throw this.aheadError; (stageAhead's first line)",
      mutants: 'false',
      reason:
        "the same check at the call's end throws the same error, and storeAhead's run stores nothing once aheadError is set",
    },
    {
      file: 'workers/store/batchedIdb.ts',
      code: 'if (this.dead) return; (stageAhead)',
      mutants: 'false',
      reason: "storeAhead's run returns when dead: what is set aside is only held in memory",
    },
    {
      file: 'workers/store/batchedIdb.ts',
      code: "this.aheadInFlight.length > 0 (stageAhead's wait)",
      mutants: 'true; >= 0',
      reason: 'aheadInFlightBytes > 0 only while an entry is in flight: the byte test alone decides',
    },
    {
      file: 'workers/store/batchedIdb.ts',
      code: 'this.aheadBytes > 0 (flushStagedAhead)',
      mutants: 'false',
      reason: 'bytes set aside mean an entry set aside: ahead.size > 0 decides',
    },
    {
      file: 'workers/store/batchedIdb.ts',
      code: 'if (batch.size === 0) return; (stage)',
      mutants: 'false',
      reason:
        'stage() runs from the write of a fresh file, which is then pending and non-null: its batch is never empty',
    },
    {
      file: 'workers/store/batchedIdb.ts',
      code: 'if (this.ignoringSaves || this.dead) return; (commitNow, before ready())',
      mutants: 'false; &&',
      reason: 'the same check after `await this.records.ready()` returns before anything is taken or stored',
    },
    {
      file: 'workers/store/batchedIdb.ts',
      code: 'if (this.committing[i].has(inode)) return this.committing[i].get(inode);',
      mutants: 'true',
      reason:
        "commits run one at a time (chained), so at most one batch is committing: a miss returns undefined, as the loop's end does",
    },
    {
      file: 'workers/store/repoLock.ts',
      code: 'this.heldNames.has(name) || queue.length > 0',
      mutants: 'false (the queue part)',
      reason:
        'a name has waiters only while it is held: a release hands it straight to the next in line, so heldNames decides',
    },
    {
      file: 'workers/store/repoLock.ts',
      code: '{ once: true }',
      mutants: '{}; { once: false }',
      reason: 'a signal fires abort once: the listener runs at most once either way',
    },
    {
      file: 'workers/store/repoLock.ts',
      code: 'Math.random().toString(36).slice(2)',
      mutants: 'without .slice(2)',
      reason: "the origin only has to differ between engines: '0.' in front changes no comparison",
    },
    {
      file: 'workers/store/repoLock.ts',
      code: '(channel as unknown as { unref?: () => void }).unref?.()',
      mutants: 'removed; unref()',
      reason: 'only lets Node exit while an engine listens; no lock or event changes',
    },
    {
      file: 'workers/store/repoLock.ts',
      code: 'if (channel) (events())',
      mutants: 'true',
      reason:
        'Node and every browser the engine runs in have BroadcastChannel: the null branch is for very old browsers',
    },
    {
      file: 'workers/store/repoLock.ts',
      code: 'this.locks instanceof InProcessLocks (dropAll)',
      mutants: 'true',
      reason: 'dropAll is for crash tests, which run on InProcessLocks',
    },
    // workers/pack: packStreamParser, deltaResolver, packIngester (issue 26, session 5)
    {
      file: 'workers/pack/packStreamParser.ts',
      code: 'private hashing = false;',
      mutants: 'true',
      reason: 'parseEntryHeader sets it for every entry before inflateEntry reads it',
    },
    {
      file: 'workers/pack/packStreamParser.ts',
      code: 'this.signal?.aborted (parseSteps)',
      mutants: 'true',
      reason: 'throwIfAborted tests the signal again: the test only saves a call',
    },
    {
      file: 'workers/pack/packStreamParser.ts',
      code: 'len - p < 20 (the ref-delta base id)',
      mutants: 'len - p <= 20',
      reason:
        'it waits for one byte more; zlib data always follows, and a stream ending there is cut inside the entry either way',
    },
    {
      file: 'workers/pack/packStreamParser.ts',
      code: 'this.scratch.length < size; Math.min(this.wholeObjectLimit, Math.max(size, this.scratch.length * 2))',
      mutants: 'true, <=; Math.max(...), this.scratch.length / 2',
      reason: 'a new or larger scratch of at least size bytes: only what is allocated changes',
    },
    {
      file: 'workers/pack/packStreamParser.ts',
      code: 'if (this.hashing) this.hasher.begin(...); if (this.hashing) this.hasher.update(...)',
      mutants: 'true, both',
      reason:
        "a delta's hash is started and fed but never ended: every later use of that Sha1 starts with init()",
    },
    {
      file: 'workers/pack/packStreamParser.ts',
      code: 'e instanceof PackError (inflateEntry)',
      mutants: 'true',
      reason: 'the inflater throws nothing but PackErrors',
    },
    {
      file: 'workers/pack/packStreamParser.ts',
      code: 'status === INFLATE_DONE',
      mutants: 'true',
      reason: 'run returns one of three statuses, and the other two are handled before',
    },
    {
      file: 'workers/pack/packStreamParser.ts',
      code: 'this.hashedUpTo < this.entryStart (endEntries)',
      mutants: 'true; <=',
      reason: 'hashing the empty range from entryStart to itself changes nothing',
    },
    {
      file: 'workers/pack/packStreamParser.ts',
      code: 'this.state === S_TRAILER (endsEarlyWithTrailer)',
      mutants: 'false',
      reason: 'checkEnd calls it only outside S_TRAILER',
    },
    {
      file: 'workers/pack/packStreamParser.ts',
      code: 'extra > 20 (checkEnd, before the whole-stream checksum)',
      mutants: 'true; extra >= 20',
      reason:
        'with exactly 20 bytes left the whole-stream SHA-1 is the computed one, which just failed to match',
    },
    {
      file: 'workers/pack/packStreamParser.ts',
      code: "if (extra > 20) { throw new PackError('PACK_TRAILING_DATA', ...) } (checkEnd, last)",
      mutants: 'false; the block, its message (no test reaches it)',
      reason:
        'unreachable: checkTrailerEarly refuses bytes after a matching trailer on the push that brings them',
    },
    {
      file: 'workers/pack/packIngester.ts',
      code: 'hint && hint > 0 ? Math.min(hint, 2 ** 31) : 1024 * 1024',
      mutants: 'false; hint >= 0; 1024 / 1024',
      reason: 'only the first size of the receive buffer, which grows to whatever arrives',
    },
    {
      file: 'workers/pack/packIngester.ts',
      code: 'if (!keepObjects) for (const table of [...]) releaseBuffer(table); (both, in result)',
      mutants: 'false; []',
      reason:
        'what finish({ objects: false }) frees early: memory only, and listing objects is refused either way',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'kind === OBJ_REF_DELTA (inflated)',
      mutants: 'false',
      reason:
        "a ref-delta's bytes then sit in the ring, but its type stays 0 while receiving, so no delta reads them",
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'entries.types[b] === 0 (inflated)',
      mutants: 'false',
      reason: 'a base left unresolved on arrival was never placed in the ring: get finds nothing for it',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'e instanceof PackError (applyEntry)',
      mutants: 'true',
      reason: "applyDelta and the meter throw only PackErrors; take's buffers are sized before",
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'resolved < total (resolveDeltas, before resolveFrom and completeThinPack)',
      mutants: 'true; resolved <= total, both',
      reason:
        'with every delta resolved, the walk finds nothing unknown and completing finds no pending base',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'k < entries.refCount (the missing-base message)',
      mutants: 'k <= entries.refCount',
      reason:
        'an unresolved chain ends in an unresolved ref-delta, so the loop throws before k reaches refCount',
    },
    // workers/pack/deltaResolver.ts, lines 131-553 (issue 26, session 6)
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'ring.isOld(b) (inflated)',
      mutants: 'true',
      reason: 'moving a base that is not about to be overwritten only copies it to the head: same bytes',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'this.arrivalScratch.length < size (inflated, take)',
      mutants: 'true; this.arrivalScratch.length <= size',
      reason: 'a fresh scratch where the old one was big enough: memory only, the result is the same',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'if (this.children) return this.children; (childLists)',
      mutants: 'false',
      reason:
        'the lists are then rebuilt for each base a thin pack appends: over the appended entries too, same walk, O(bases x objects) time',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'i < listed (ofsFirst, ofsLast)',
      mutants: 'true; i <= listed, both',
      reason:
        'an appended base (i >= listed) then reads ofsStart past its rows: undefined or the total, no ofs child either way',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'if (kinds[child] === OBJ_REF_DELTA) refParent[child] = top.entry; (resolveFrom)',
      mutants: 'true',
      reason:
        'parentOf reads refParent only for ref-deltas (bases[] first): an ofs-delta entry in it is never read',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'if (inflater.run(bytes, this.received.length) !== INFLATE_DONE) (inflateAt)',
      mutants: 'false',
      reason:
        'unreachable: every entry inflated whole once (or was deflated by completeThinPack), and nothing rewrites its bytes',
    },
    // workers/store: repoFs, registry, storage, credentials, errors, crashPoints, repoEvents, store (issue 26,
    // session 6, mutstore3)
    {
      file: 'workers/store/repoFs.ts',
      code: "fs.promises.stat('/') (writeAllOrNothing, stageFileAhead)",
      mutants: "stat('')",
      reason: 'any call loads the tree (it is only made for that): a path that does not exist does as well',
    },
    {
      file: 'workers/store/repoFs.ts',
      code: "storageError(err, 'the changes') (writeAllOrNothing)",
      mutants: "''",
      reason:
        "BatchedIdb's commit and staging throw StoreErrors already worded with 'the changes', which storageError keeps",
    },
    {
      file: 'workers/store/repoFs.ts',
      code: 'db.generation === undefined (sync)',
      mutants: 'true',
      reason:
        'generation is set only by loading the tree or by a commit after it: it is never set while loaded is false',
    },
    {
      file: 'workers/store/repoFs.ts',
      code: 'if (db.held || db.pendingWrites > 0) return false; (sync, before the read)',
      mutants: 'false; &&; db.held as false',
      reason:
        'a fast path: the same test after the read of the stored generation returns false for the same state',
    },
    {
      file: 'workers/store/repoFs.ts',
      code: 'const inodes: number[] = [] (placeStaged)',
      mutants: '["Stryker was here"]',
      reason: 'a key no record has: adopting it and later forgetting or deleting it changes nothing stored',
    },
    {
      file: 'workers/store/repoFs.ts',
      code: 'db instanceof BatchedIdb (RepoFsBackend.init)',
      mutants: 'true',
      reason: 'RepoFsBackend is made only by createBatchedFs, whose db is always a BatchedIdb',
    },
    {
      file: 'workers/store/repoFs.ts',
      code: 'cache._root !== this.counted (reserveInode)',
      mutants: 'true',
      reason:
        'walking the tree at every call finds no larger number than counting on: only the time (O(n²)) changes',
    },
    {
      file: 'workers/store/repoFs.ts',
      code: "typeof data === 'string' ? 'utf8' : undefined (writeFileDeep)",
      mutants: "true; false; !==; typeof data === ''",
      reason:
        'lightning-fs writes a string as UTF-8 when given no encoding, and ignores the encoding of bytes',
    },
    {
      file: 'workers/store/repoFs.ts',
      code: "dir === '/' ? '' : dir (du)",
      mutants: "false; dir === ''",
      reason: "lightning-fs normalizes '//name' to '/name'",
    },
    {
      file: 'workers/store/errors.ts',
      code: "e?.message ?? '' (storageError)",
      mutants: '"Stryker was here!"',
      reason: 'any text without "quota" in it: the test is only whether a missing message says quota',
    },
    {
      file: 'workers/store/errors.ts',
      code: 'if (!storage?.estimate) return undefined; (storageEstimate)',
      mutants: 'false',
      reason:
        'storage.estimate() then throws a TypeError inside the try below, which returns the same undefined',
    },
    {
      file: 'workers/store/repoEvents.ts',
      code: "typeof BroadcastChannel === 'function'",
      mutants: 'true',
      reason:
        'Node and every browser the engine runs in have BroadcastChannel: the null is for very old browsers',
    },
    // workers/store: repair, repoLock, the rest of session 5's survivors (issue 26, session 6, mutstore3)
    {
      file: 'workers/store/repair.ts',
      code: 'databases ?? []',
      mutants: '["Stryker was here"]',
      reason: 'a name parseRepoDatabase refuses: the loop skips it',
    },
    {
      file: 'workers/store/repair.ts',
      code: "await locks.repoLockInUse(id) (before deleting); done === 'busy'",
      mutants: "false; false, ''",
      reason:
        'the two guards overlap: a lock in use makes tryRepoLock (ifAvailable) return busy, and one it finds busy was in use',
    },
    {
      file: 'workers/store/repair.ts',
      code: 'let names: string[] = []',
      mutants: '["Stryker was here"]',
      reason: 'both the try and its catch assign names before it is read',
    },
    {
      file: 'workers/store/repair.ts',
      code: 'st.isFile() || st.isSymbolicLink()',
      mutants: 'true',
      reason: "lightning-fs's tree holds only folders, files and symbolic links",
    },
    {
      file: 'workers/store/repair.ts',
      code: '.find(([, name]) => name === ref)?.[0]',
      mutants: 'without ?.',
      reason: "no such ref: the TypeError is caught by readHead's catch, which returns the same undefined",
    },
    {
      file: 'workers/store/repoLock.ts',
      code: "this.heldHere.get(m?.repoId); m?.type === 'who'; e.data?.type === 'busy'",
      mutants: 'without ?.',
      reason: 'a message without data then throws inside the handler, which does nothing with it either way',
    },
    {
      file: 'workers/store/repoLock.ts',
      code: 'this.events()?.postMessage(event); if (ch) (lockedRun)',
      mutants: 'without ?.; true',
      reason:
        'Node and every browser the engine runs in have BroadcastChannel: the null is for very old browsers',
    },
    {
      file: 'workers/store/repoLock.ts',
      code: 'if (this.heldHere.has(repoId)) return (tryRepoLock)',
      mutants: 'false',
      reason:
        "a fast path: the lock held here makes the ifAvailable request below return null, so 'busy' all the same",
    },
    {
      file: 'workers/store/repoLock.ts',
      code: 'state?.pending ?? []; state.held ?? []; state.pending ?? []',
      mutants: '["Stryker was here"]',
      reason: 'an entry without a name: no lock name equals undefined',
    },
    // workers/ops/read/readFileMinimal.ts (issue 26, session 6, mutminimal): the survivors judged equivalent.
    {
      file: 'workers/ops/read/readFileMinimal.ts',
      code: "if (clean === '') return [];",
      mutants: "false; clean === 'Stryker was here!'",
      reason: "lookupParts('') returns [] too (the node's 'true' mutant is killed)",
    },
    {
      file: 'workers/ops/read/readFileMinimal.ts',
      code: 'if (treeFilter) await ensureObject(...) (readTree)',
      mutants: 'true',
      reason: 'without a filter the commit came with every tree, so ensureObject finds it stored and returns',
    },
    {
      file: 'workers/ops/read/readFileMinimal.ts',
      code: 'if (signal?.aborted) throw abortedError(); (fetchPack)',
      mutants: 'false',
      reason: 'receivePack itself fails a cancelled request with ABORTED; the check only keeps the code sure',
    },
    {
      file: 'workers/ops/read/readFileMinimal.ts',
      code: 'try { await fs.stat(GITDIR config); return; } (ensureGitDir)',
      mutants: "{}; fs.stat('')",
      reason:
        'the base is then written again with the same URL: the same config, description and exclude bytes',
    },
    {
      file: 'workers/ops/read/readFileMinimal.ts',
      code: 'if (commits.length === 0) return; (addShallow)',
      mutants: 'false',
      reason: 'writeShallow of the existing list rewrites the same bytes, or unlinks a file that is absent',
    },
    // workers/pack/inflate.ts, lines 321-511 (header, blockHeader, stored, trailer; session 6, mutinflate)
    {
      file: 'workers/pack/inflate.ts',
      code: 'bc <= 24 (blockHeader, its four loads)',
      mutants: 'bc < 24, all four; false, the second (HLIT/HDIST/HCLEN)',
      reason:
        'a load leaves at least 24 bits and no field read before the next load takes more than 14; the first load leaves 22 after the block header, enough for HLIT, HDIST and HCLEN',
    },
    {
      file: 'workers/pack/inflate.ts',
      code: 'p < end ? src[p] : 0 (blockHeader, its four loads)',
      mutants: 'true; p <= end, all four',
      reason:
        'bits loaded past `end` are never used: the header is rolled back if it reached them, else they are masked off (p > end) before codes() loads the real bytes over them',
    },
    {
      file: 'workers/pack/inflate.ts',
      code: 'p > end && bc < (p - end) << 3 (blockHeader, both)',
      mutants: 'true && …; p >= end; bc <= (p - end) << 3, both',
      reason:
        'at p <= end the right side (bc below zero) is false; bc equal to the bits loaded past the end means the header used every real bit, and waiting changes nothing since a block header is always followed by its symbols',
    },
    {
      file: 'workers/pack/inflate.ts',
      code: 'litBits < 0; distBits < 0',
      mutants: '<= 0, both',
      reason: 'buildTable returns -1 or a root width of at least 1, never 0',
    },
    {
      file: 'workers/pack/inflate.ts',
      code: 'if (p > end) { … } (end of blockHeader)',
      mutants: 'false; p >= end; the block removed',
      reason:
        'codes() runs next in the same run() with the same `end` and drops the same zeros (p - end still counts them); at p == end it drops nothing',
    },
    {
      file: 'workers/pack/inflate.ts',
      code: 'n > 0 (stored)',
      mutants: 'true; n >= 0',
      reason: 'with n == 0 the copy is of an empty subarray and the counters move by 0',
    },
    // workers/pack/inflate.ts, lines 255-320 (start, run, slide; session 6, mutinflate)
    {
      file: 'workers/pack/inflate.ts',
      code: 'this.final = false (start)',
      mutants: 'true',
      reason: 'every block header sets `final` before anything reads it',
    },
    {
      file: 'workers/pack/inflate.ts',
      code: 'if (this.verifyChecksum) (slide)',
      mutants: 'true',
      reason: 'without verification the running Adler-32 is computed but never compared: it costs time only',
    },
    // workers/pack/inflate.ts, lines 1-254 (tables) and 512-738 (codes(): fast and slow paths; session 7, mutinf7)
    {
      file: 'workers/pack/inflate.ts',
      code: 'i < 256; b < 8 (REVERSE8)',
      mutants: 'i <= 256; b <= 8',
      reason:
        'REVERSE8[256] is past the end of the Uint8Array(256), which drops the write; bit 8 of a byte below 256 is 0',
    },
    {
      file: 'workers/pack/inflate.ts',
      code: 'len < 15 (buildTable, offsets)',
      mutants: 'len <= 15',
      reason: 'offsets[16] is past the end of the Uint16Array(16): a typed array drops the write',
    },
    {
      file: 'workers/pack/inflate.ts',
      code: 'if (left > 0) table.fill(...) (buildTable)',
      mutants: 'true; left >= 0',
      reason: 'a complete code writes every root entry (a code or a link) over the invalid ones filled first',
    },
    {
      file: 'workers/pack/inflate.ts',
      code: 'let curPrefix = -1 (buildTable)',
      mutants: '+1',
      reason:
        'a first subtable at prefix 1 needs short codes filling half the code space and long ones the other half: 1024 literal/length or 256 distance codes at least',
    },
    {
      file: 'workers/pack/inflate.ts',
      code: 'i < rootSize; i < subSize (buildTable)',
      mutants: 'i <= rootSize; i <= subSize',
      reason:
        "the one extra write (for a code whose index is 0) lands on the next subtable's first entry, which that subtable overwrites, or past every entry a lookup reads",
    },
    {
      file: 'workers/pack/inflate.ts',
      code: 'private final = false',
      mutants: 'true',
      reason: 'start() and every block header set `final` before anything reads it',
    },
    {
      file: 'workers/pack/inflate.ts',
      code: 'p <= fastIn (codes)',
      mutants: 'false; p < fastIn',
      reason: 'the fast path only saves time: the slow path decodes each symbol the same, one at a time',
    },
    {
      file: 'workers/pack/inflate.ts',
      code: 'o >= limit; o + len > limit (codes, fast path)',
      mutants: 'true, both; o + len >= limit',
      reason:
        'the symbol is rolled back and left to the slow path, which writes it or stops just as the original',
    },
    {
      file: 'workers/pack/inflate.ts',
      code: 'bc <= 24 (codes, every load of both paths)',
      mutants: 'bc < 24, all six',
      reason:
        'a load leaves at least 24 bits: a length code with its extra bits takes at most 20, a distance code 15, and 13 extra bits are loaded by their own check',
    },
    {
      file: 'workers/pack/inflate.ts',
      code: 'op > OP_END (codes, fast path)',
      mutants: 'op >= OP_END',
      reason: 'op == OP_END has left the loop on the line before',
    },
    {
      file: 'workers/pack/inflate.ts',
      code: 'op > 1 (codes, both paths)',
      mutants: 'true; op >= 1, both',
      reason: 'op is at least 1 there, and op 1 is a length with no extra bits: it adds 0 and shifts by 0',
    },
    {
      file: 'workers/pack/inflate.ts',
      code: 'dx >= OP_LINK (codes, both paths)',
      mutants: 'dx > OP_LINK, both',
      reason:
        'a subtable entry is never a link, and a root entry that is one was followed on the lines before',
    },
    {
      file: 'workers/pack/inflate.ts',
      code: 'if (dx) (codes, both paths)',
      mutants: 'true, both',
      reason: 'with no extra bits the block adds 0, shifts by 0 and loads nothing (bc < 0 never holds)',
    },
    {
      file: 'workers/pack/inflate.ts',
      code: 'bc < dx (codes, both paths)',
      mutants: 'true; bc <= dx, both',
      reason:
        'a load when the bits suffice only loads the next bits early: the loop stops above 24 bits and bb holds them all',
    },
    {
      file: 'workers/pack/inflate.ts',
      code: 'p < end ? src[p] : 0 (codes, slow path, its three loads)',
      mutants: 'true; p <= end, all three',
      reason:
        'bytes past `end` are used by no symbol kept: one that reached them is rolled back before its error or output counts, and the rest are masked off when codes() returns',
    },
    {
      file: 'workers/pack/inflate.ts',
      code: 'p > end && bc < (p - end) << 3 (codes, slow path)',
      mutants: 'true && …; p >= end',
      reason: 'at p <= end the right side (bc below zero) is false',
    },
    {
      file: 'workers/pack/inflate.ts',
      code: 'if (p > end) { … } (end of codes)',
      mutants: 'p >= end',
      reason: 'at p == end it drops no bits, and bb holds no bits above bc (bc is at most 31 there)',
    },
    // workers/ops/read/blame.ts lines 250-398 (issue 26, session 7, mutblame7): survivors of the session 5
    // run judged equivalent; the others are killed by the scratch histories of test/blameCases.test.ts.
    {
      file: 'workers/ops/read/blame.ts',
      code: 'treeFilePairs(repo, parent tree, tree, false) (renamedOrigin)',
      mutants: 'true',
      reason:
        'unchanged files are rename sources only under copy detection, which find_rename does not use, and the report drops them',
    },
    {
      file: 'workers/ops/read/blame.ts',
      code: "p.status === 'C' (renamedOrigin)",
      mutants: 'false; the status ""',
      reason:
        'with singleFollow and no copy detection a source is never kept nor taken twice, so no pair is C',
    },
    {
      file: 'workers/ops/read/blame.ts',
      code: 'passDownRun: its body; if (!graph || shallow.size) return false; parents.length !== 1',
      mutants: '{}; true; parents.length === 1',
      reason:
        "a fast path not taken leaves the lines to passBlame, which passes them to the same place; a merge the filter says kept the path has its first parent's blob, which takes every line too",
    },
    {
      file: 'workers/ops/read/blame.ts',
      code: 'if (scapegoats[i]) continue (passBlame)',
      mutants: 'false',
      reason:
        'the path is never added against a parent that has it, so renamedOrigin finds no rename there and the scapegoat stays',
    },
    {
      file: 'workers/ops/read/blame.ts',
      code: 'if (scapegoats.some((s) => s)) (passBlame)',
      mutants: 'true',
      reason:
        "with no scapegoat the loop passes nothing; the extra read is of the origin's own blob, a version the walk fetches anyway",
    },
    // workers/ops/sync/lazyBlobs.ts, lines 150-300 (issue 26, session 7, mutwt7)
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: 'rest === 0 (planBlobBatches)',
      mutants: 'false',
      reason: 'with rest 0 the spread is 0, no weight is given, and the sizes are [first] all the same',
    },
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: 'first > 0 ? [first] : []',
      mutants: 'true; [] as ["Stryker was here"]',
      reason: 'a first of 0 (or a string) is dropped by the filter of sizes > 0 at the end',
    },
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: 'sizes[sizes.length - 1] += rest - given',
      mutants: '-=; sizes.length + 1',
      reason:
        'the rounded running total ends at exactly rest (acc sums the weights as sum did), so it adds 0',
    },
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: 'sizes.filter((n) => n > 0)',
      mutants: 'sizes; true; n >= 0',
      reason: 'no size is 0: each upTo passes the one before, and spread and parts are at most rest',
    },
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: "this.state === 'settled' (Batch.settle)",
      mutants: "false; ''",
      reason: 'no batch is settled twice: cancel settles only a queued one, runBatch only one it runs',
    },
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: 'notPacked.length === 0',
      mutants: 'false',
      reason: 'a fast path: looseObjects of no oids finds none, and the next test returns the same result',
    },
    // workers/ops/sync/lazyBlobs.ts, lines 301-360 (issue 26, session 7, mutwt7)
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: 'wanted.length === 0',
      mutants: 'false',
      reason: 'a fast path: no oid makes no batch, and the empty result is returned after waiting for none',
    },
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: 'onProgress?.({ (report)',
      mutants: 'onProgress(',
      reason: 'report is only called, and only listens, when onProgress is given',
    },
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: 'if (onProgress); if (onPack) (the listeners added)',
      mutants: 'true, both',
      reason:
        'an added report calls onProgress?.() (nothing); an undefined pack listener throws inside the catch',
    },
    // workers/ops/sync/push.ts (issue 26, session 7, mutpush7)
    {
      file: 'workers/ops/sync/push.ts',
      code: 'const remoteTips: string[] = [];',
      mutants: '["Stryker was here"]',
      reason: 'an id no commit has is queued as nothing: the walk loads it as null and skips it',
    },
    {
      file: 'workers/ops/sync/push.ts',
      code: 'if (await isCommit(repo, oid)) remoteTips.push(oid);',
      mutants: 'true',
      reason:
        'the walk loads each remote tip itself, and skips one that is not a commit it has, as isCommit would',
    },
    {
      file: 'workers/ops/sync/push.ts',
      code: 'if (!packfile) throw',
      mutants: 'false',
      reason: "isomorphic-git's packObjects returns the pack whenever it is not asked to write it",
    },
    // workers/pack/deltaResolver.ts, lines 254-551 (issue 26, session 7, mutdelta7)
    {
      file: 'workers/pack/deltaResolver.ts',
      code: '[] (completeThinPack, pending)',
      mutants: '["Stryker was here"]',
      reason:
        'refEntries[a string] is undefined, whose type is not 0: the string is skipped, and only makes room for one entry more',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'this.entries.types[this.entries.refEntries[k]] === 0 (completeThinPack, pending)',
      mutants: 'true',
      reason:
        'the loop over pending skips a resolved delta again: listing it only makes room for more entries',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'if (appended === 0) return resolved; (completeThinPack)',
      mutants: 'false',
      reason:
        'with no base appended the deltas stay unresolved and resolveDeltas throws: the count and checksum rewritten then are never read',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'i < n (childLists, counting the ofs-deltas by base)',
      mutants: 'i <= n',
      reason:
        'bases[n] is past the table (its capacity is at most the count, n, once the pack is in): undefined',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'bases[i] >= 0 (childLists, both loops over bases)',
      mutants: 'true',
      reason: 'a base of -1 then indexes ofsStart and ofsChildren at -1 or NaN, which a typed array ignores',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'i >= 0 (childLists, both backward loops)',
      mutants: 'i > 0, both',
      reason:
        "entry 0 is never a delta (an ofs-delta's base comes before it, a ref-delta's bases[] is -1) nor left unresolved without ref-deltas",
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'needed[i] && bases[i] >= 0 (childLists)',
      mutants: 'bases[i] >= 0 made true',
      reason:
        'for a needed whole object (bases[i] = -1) it writes needed[-1], which a typed array ignores (the rest of this entry: killed in session 10 by the inflate budget charged once)',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'k < refCount (childLists, refOrder[k] = k)',
      mutants: 'k <= refCount',
      reason: 'refOrder[refCount] is past the table: a typed array ignores the write',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'end < refCount (refRange)',
      mutants: 'true; end <= refCount',
      reason:
        'refOrder[refCount] is past the table: compareOids reads undefined bytes, NaN, never 0, so the range ends there anyway',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: '[] (resolveFrom, the stack)',
      mutants: '["Stryker was here"]',
      reason:
        'the string is a frame with no children and no data: popped when the first root is done, skipped by the drops',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'ofsNext === ofsEnd && refNext === refEnd (frameFor)',
      mutants: 'false',
      reason: 'a frame for an object with no children is pushed, then popped at once: memory only',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'needed && root < listed && !needed[root] (resolveFrom)',
      mutants: 'false',
      reason:
        "a root whose deltas all resolved on arrival is inflated again, but the check at each child skips them: nothing applied or charged twice (the child's check is killed since session 10)",
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'deltaScratch.length < deltaSize',
      mutants: 'deltaScratch.length <= deltaSize',
      reason: 'a new scratch for a delta of exactly its size: memory only',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'if (lastChild) pool.give(base);',
      mutants: 'false',
      reason: 'a base not given back to the pool: memory only',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'if (!known) { ... } (resolveFrom)',
      mutants: 'true',
      reason:
        'an object resolved on arrival gets again the type, size and id it has (and a ref-delta its parent): the same values',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'releaseTables: its body, if (children), its block, if (children.needed)',
      mutants: '{}; false; {}; false',
      reason:
        'frees memory only: nothing reads the lists or the resolver tables after resolving (and Node 20 has no transferToFixedLength)',
    },
    // workers/ops/worktree/pull.ts, lines 64-170 (issue 26, session 8, mutpull8)
    {
      file: 'workers/ops/worktree/pull.ts',
      code: 'ours === theirs',
      mutants: 'false',
      reason:
        'findMergeBase of a commit and itself is that commit: the next test answers up-to-date the same',
    },
    {
      file: 'workers/ops/worktree/pull.ts',
      code: 'needed.length > 0 (before the merge)',
      mutants: 'true; >= 0',
      reason: 'ensureBlobs of no blob returns before it asks anything (nothing not packed)',
    },
    {
      file: 'workers/ops/worktree/pull.ts',
      code: "(err as { code?: string }).code === 'MergeConflictError' && data?.filepaths",
      mutants: '||; true && data?.filepaths; data.filepaths',
      reason:
        "isomorphic-git's merge (abortOnConflict) throws filepaths only with a MergeConflictError, whose data it always sets",
    },
    // workers/ops/worktree/checkout.ts (session 8, mutco8)
    {
      file: 'workers/ops/worktree/checkout.ts',
      code: '!(head === 0 && stage === 0) (the forced second pass)',
      mutants: 'stage === 0 as true',
      reason:
        "after isomorphic-git's checkout the index holds no path of filepaths that HEAD lacks (a staged new file is dropped too), so no row has head 0 and stage other than 0",
    },
    {
      file: 'workers/ops/worktree/checkout.ts',
      code: 'createBranch: false (resolveTarget, a detached tag or ref)',
      mutants: 'true',
      reason: 'createBranch is read only together with branch, which is null for a detached target',
    },
    {
      file: 'workers/ops/worktree/checkout.ts',
      code: "e?.code === 'CheckoutConflictError' ? (e.data?.filepaths ?? []) : null (conflictPaths)",
      mutants: 'e.code; e.data.filepaths; ["Stryker was here"]',
      reason:
        "isomorphic-git's checkout rejects only with error objects, and its CheckoutConflictError always carries data.filepaths",
    },
    // workers/ops/sync/fetch.ts (issue 26, session 8, mutfetch8)
    {
      file: 'workers/ops/sync/fetch.ts',
      code: "the packed-refs read's .catch(() => '')",
      mutants: "'Stryker was here!'",
      reason: 'parsePackedRefs skips a line that is no ref: junk reads as the empty file does',
    },
    {
      file: 'workers/ops/sync/fetch.ts',
      code: 'let updates: { ... }[] = []',
      mutants: '["Stryker was here"]',
      reason:
        'storeFetched sets updates to [] before anything reads it, and nothing reads it when storeFetched does not run',
    },
    {
      file: 'workers/ops/sync/fetch.ts',
      code: '[...new Set([...shallowBefore.filter(...), ...shallowInfo.shallow])].sort()',
      mutants: 'no .sort()',
      reason:
        'writeShallow sorts what it writes; the order only sets shallowChanged, and shallowInfo comes with a pack, which is written anyway',
    },
    // workers/ops/sync/lazyBlobs.ts, lines 361-480 (issue 26, session 8, mutlazy8; line numbers before 56679b8)
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: 'if (!isAbort(err)) failed = true (pump)',
      mutants: 'true',
      reason:
        "an own batch ends ABORTED without the call only by cancelBlobFetches, which cancels every batch of the repo, or by this pump's give-up, after failed is set",
    },
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: "resolve('aborted') (the call's abort listener)",
      mutants: '""',
      reason:
        'it resolves only once the signal fired, so `|| signal?.aborted` takes the abort branch all the same',
    },
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: 'if (onProgress) report()',
      mutants: 'true',
      reason: 'report calls onProgress?.(), which does nothing without one',
    },
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: "outcomes === 'aborted' || signal?.aborted",
      mutants: "&&; '' for 'aborted'",
      reason:
        "the abort listener resolves 'aborted' synchronously, so settled wins the race only if the signal fires in the microtasks between, where no caller code runs",
    },
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: 'for (const batch of waitedFor) batch.waiters-- (after all settled)',
      mutants: '++',
      reason:
        'every batch waited for has settled here; waiters is read only for batches not settled (leave, the give-up)',
    },
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: 'if (onObject) (the listener removed in finally)',
      mutants: 'true',
      reason: 'deleting undefined from a set of listeners removes nothing',
    },
    // workers/ops/sync/lazyBlobs.ts, lines 479-519 (issue 26, session 8, mutlazy8; numbering of 56679b8)
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: "batch.state !== 'settled' (leave)",
      mutants: "true; ''",
      reason:
        'cancelling a settled batch forgets what is forgotten and aborts a finished request; it settles only a queued one',
    },
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: "batch.state = 'running' (runBatch)",
      mutants: "''",
      reason: "state is only compared with 'queued' and 'settled', so any other value means running",
    },
    // workers/ops/read/blame.ts lines 1-175 (issue 26, session 8, mutblame8)
    {
      file: 'workers/ops/read/blame.ts',
      code: 'if (!page.more || page.entries.length === 0) break; (the versions)',
      mutants: '&&; page.entries.length === 0 as false',
      reason:
        'a page that says more is never empty, and a last page read again past its end is empty: the same versions',
    },
    // workers/ops/read/blame.ts lines 176-249 (issue 26, session 8, mutblame8): survivors judged equivalent;
    // the others are killed by test/blameCases.test.ts cases added after the run.
    {
      file: 'workers/ops/read/blame.ts',
      code: 'if (found.length || fileLines) progress(); (fetch)',
      mutants: 'true',
      reason:
        'a report before a request with nothing new repeats the counts of the last one: no line, commit or text is lost or shown twice',
    },
    {
      file: 'workers/ops/read/blame.ts',
      code: 'if (known) return known; (read)',
      mutants: 'false',
      reason:
        'a cache: the blob read again is stored by then (at < fetchedUpTo, or fetched alone), so the same bytes come back',
    },
    {
      file: 'workers/ops/read/blame.ts',
      code: 'new Array(finalLines.length) (result)',
      mutants: 'new Array()',
      reason:
        'every line of the file is given its origin by index, so the array grows to the same length, with no hole',
    },
    {
      file: 'workers/ops/read/blame.ts',
      code: 'if (!c) (readCommit)',
      mutants: 'true',
      reason: 'a cache: a commit header read again is the same',
    },
    {
      file: 'workers/ops/read/blame.ts',
      code: 'if (!keys) (keysOf)',
      mutants: 'true',
      reason: "a cache: a path's Bloom keys computed again are the same",
    },
    {
      file: 'workers/ops/read/blame.ts',
      code: 'unchangedAt: its body; position >= 0; filter !== null; unchangedByFilter: () => ...; graph !== null',
      mutants: '{}; false, position > 0; false, filter === null; () => undefined; false',
      reason:
        'each makes the filter answer "maybe changed": the fast paths (passDownRun, sameOrigin) are not taken and the tree reads give the same origins',
    },
    // workers/ops/sync/fetch.ts lines 461-601 (issue 26, session 9, mutfetch9b)
    {
      file: 'workers/ops/sync/fetch.ts',
      code: 'acknowledgments?.acks ?? [] (negotiateAndReceive)',
      mutants: '["Stryker was here"]',
      reason:
        'acknowledgments is absent only from the answer to done (the parser takes no other answer without it), after which the loop returns: the junk id is never sent',
    },
    {
      file: 'workers/ops/sync/fetch.ts',
      code: 'if (!negotiator.ack(oid)) (negotiateAndReceive)',
      mutants: 'true',
      reason:
        "a round's haves are none of them common when sent, so its first new ACK always names one not yet common and resets; re-ACKs of common ones are skipped before",
    },
    {
      file: 'workers/ops/sync/fetch.ts',
      code: 'acknowledgments?.ready ?? false (negotiateAndReceive)',
      mutants: 'true',
      reason:
        'acknowledgments is absent only from the answer to done, and then done || ready holds either way',
    },
    {
      file: 'workers/ops/sync/fetch.ts',
      code: 'if (head) toPeel.add(head) (localTips)',
      mutants: 'true',
      reason: 'a HEAD that does not resolve adds null, which peel reads as no object and so as no tip',
    },
    {
      file: 'workers/ops/sync/fetch.ts',
      code: 'if (ref.peeled) tips.add(ref.peeled) (localTips)',
      mutants: 'false',
      reason:
        'peeling a packed ref again reaches the commit its ^ line names, or null where that names another kind, which the negotiator skips: slower, the same haves',
    },
    {
      file: 'workers/ops/sync/fetch.ts',
      code: 'if (commit) tips.add(commit) (localTips)',
      mutants: 'true',
      reason: 'a null tip reads as no commit in the negotiator (commitReader), which adds nothing for it',
    },
    {
      file: 'workers/ops/sync/fetch.ts',
      code: 'new Set<string>([descendant]) (isAncestor)',
      mutants: '[]',
      reason: 'commits cannot form a cycle: no walk from the descendant reaches it again',
    },
    {
      file: 'workers/ops/sync/fetch.ts',
      code: 'limit !== undefined && commit.time < limit - 86_400 (isAncestor)',
      mutants: 'limit !== undefined as true',
      reason: 'without a limit, commit.time < NaN is false: no commit is cut either way',
    },
    {
      file: 'workers/ops/sync/fetch.ts',
      code: 'if (!seen.has(p)) (isAncestor)',
      mutants: 'true',
      reason: 'a commit queued twice is walked twice to the same answer: cost only',
    },
    {
      file: 'workers/ops/sync/fetch.ts',
      code: '[...(await shallowCommits(repo))].sort() (readShallow)',
      mutants: 'no .sort()',
      reason:
        "the order reaches only the request's shallow lines, which upload-pack reads as a set, and the comparison with another readShallow of the same file",
    },
    // workers/ops/worktree/pull.ts, mergeState.ts (issue 26, session 9, mutpull9)
    {
      file: 'workers/ops/worktree/mergeState.ts',
      code: 'bytes ? indexUnmergedPaths(bytes as Uint8Array) : []',
      mutants: '["Stryker was here"]',
      reason: 'a merge in progress (MERGE_HEAD) always has the index its conflicted merge wrote',
    },
    {
      file: 'workers/ops/worktree/pull.ts',
      code: 'throwIfAborted(signal) (startConflictedMerge, after ensureBlobs)',
      mutants: 'removed',
      reason:
        'ensureBlobs rethrows a cancel seen up to its return (checked: the test cancelling as the last blob arrives passes without it); no hook of the op runs between it and the write',
    },
    {
      file: 'workers/ops/worktree/pull.ts',
      code: 'ctx.repos.forget(repoId) (startConflictedMerge)',
      mutants: 'removed',
      reason:
        'reached only after the batch committed, whose writes went through this handle: its caches hold them (status, commit and abort after a conflict pass without it)',
    },
    // workers/ops/sync/fetch.ts lines 321-460 (issue 26, session 9, mutfetch9a)
    {
      file: 'workers/ops/sync/fetch.ts',
      code: 'if (updates.length > 0) (writePackedRefs in the batch)',
      mutants: 'true; updates.length >= 0',
      reason:
        'with no update, packed holds the refs just read from packed-refs, which this engine wrote in the same serialization: the same bytes again, and no ref to unhide',
    },
    {
      file: 'workers/ops/sync/fetch.ts',
      code: 'if (shallowChanged) await writeShallow(fs, storedShallow)',
      mutants: 'true',
      reason:
        'unchanged, storedShallow is shallowBefore, read from the shallow file: writeShallow writes the same sorted lines again, or unlinks a file that is absent',
    },
    {
      file: 'workers/ops/sync/fetch.ts',
      code: 'r.movedTo || client.movedOnOrigin ? { movedTo: client.movedOnOrigin } : {} (the registry record)',
      mutants: 'true',
      reason: 'it adds movedTo: undefined to a record that had none: the record reads the same',
    },
    {
      file: 'workers/ops/sync/fetch.ts',
      code: 'storedShallow.length === 0 && (pack?.counts.commit || shallowChanged) (commitGraphAfterStore)',
      mutants: 'true; || for the first &&; true for storedShallow.length === 0; true for the ( || )',
      reason:
        'updateCommitGraph adds only the commits its graph lacks and returns null for a shallow repo (it reads the shallow file just written): called anyway, it writes nothing',
    },
    // workers/ops/sync/lazyBlobs.ts (issue 26, session 9, mutlazy9)
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: "err instanceof OperationError && err.code === 'ABORTED' (isAbort)",
      mutants: 'true for either side',
      reason:
        "a batch fails with an OperationError only as runBatch's abortedError(), and with code ABORTED (store, transport) only once its signal fired, which runBatch turns into that error",
    },
    // workers/ops/worktree/checkout.ts, newWorktree.ts (issue 26, session 9, mutco9)
    {
      file: 'workers/ops/worktree/checkout.ts',
      code: 'err instanceof MissingObjectError; [...files].find(([, f]) => f.oid === err.oid)?.[0]; path ? (blobFetchFailed)',
      mutants: 'true; .find(...)[0]; true',
      reason:
        'ensureBlobs is asked only for blobs of files, so a missing one always names a file, and another error has no oid any file has',
    },
    {
      file: 'workers/ops/worktree/checkout.ts',
      code: 'if (intoNothing) forgetLoadedPacks(repo); (checkout)',
      mutants: 'true; false',
      reason: 'memory only: packs isomorphic-git let go are read again from storage when wanted',
    },
    {
      file: 'workers/ops/worktree/checkout.ts',
      code: 'paths?.some((p) => p.startsWith(path + "/")) (listFiles)',
      mutants: 'paths.some',
      reason: 'paths is undefined only when all is true, and then inside is true and the test is not reached',
    },
    // blame.ts (issue 26, session 10, mutblame10)
    {
      file: 'workers/ops/read/blame.ts',
      code: 'if (known) return known; (sameOrigin)',
      mutants: 'false',
      reason:
        "an origin exists only for a path its commit has, of the blamed file's kind (sameOrigin checks it, renames pair only like kinds), so the tree read finds that entry and origin() returns the same object",
    },
    {
      file: 'workers/ops/read/blame.ts',
      code: 'parents.length !== 1 (passDownRun)',
      mutants: 'false',
      reason:
        "a merge the filter says kept the path has its first parent's blob, which passBlame gives every line to as well (pass_whole_blame); a root commit added the path, so its filter never says kept",
    },
    // push.ts (issue 26, session 10, mutpush10)
    {
      file: 'workers/ops/sync/push.ts',
      code: '() => false (isStored, no loose object)',
      mutants: '() => undefined',
      reason: 'isStored is read only by an if: undefined is as falsy there as false',
    },
    {
      file: 'workers/ops/sync/push.ts',
      code: "() => '' (setRemoteTracking, no packed-refs)",
      mutants: '"Stryker was here!"',
      reason:
        'parsePackedRefs skips a line that is neither a ref nor a peeled id: that text holds no refs, as empty',
    },
    {
      file: 'workers/ops/sync/push.ts',
      code: 'if (!read.has(oid)) (newCommitsOf, load)',
      mutants: 'true',
      reason: 'reading a commit again stores the same fields (or null again): it costs a read only',
    },
    {
      file: 'workers/ops/sync/push.ts',
      code: 'if (!isRemote) walked.push(oid);',
      mutants: 'true',
      reason: "the remote's commits walked are dropped by walked.filter(!remote.has) before the list is used",
    },
    // checkout.ts / newWorktree.ts (issue 26, session 10, mutco10)
    {
      file: 'workers/ops/worktree/checkout.ts',
      code: 'if (err instanceof HostileTreeError) return new Map(); (previousFiles)',
      mutants: 'true',
      reason:
        "listFiles of HEAD's commit throws nothing else: a blob:none clone holds all its trees, and strict: false names no PATH_NOT_FOUND",
    },
    {
      file: 'workers/ops/worktree/newWorktree.ts',
      code: 'if (!paths) return; (write)',
      mutants: 'false',
      reason:
        "onPack calls it only for an id byOid has, with no await between, and the loop after the fetch walks byOid's own keys, each once",
    },
    {
      file: 'workers/ops/worktree/newWorktree.ts',
      code: 'if (signal?.aborted) throw abortedError(); (place)',
      mutants: 'false',
      reason:
        'a cancel is also checked before each stored blob is written, by ensureBlobs, and by checkout before anything is named: only the staging after it goes on, and what it staged is dropped all the same',
    },
    {
      file: 'workers/ops/worktree/newWorktree.ts',
      code: "type !== 'blob' || writeError !== null (onObject)",
      mutants: "false for type !== 'blob'; false for writeError !== null",
      reason:
        "byOid holds only files' blob ids, and an id hashes its object's type, so no other object has one; after a write error every queued work is skipped (chain) and the error thrown: only a copy is made",
    },
    {
      file: 'workers/ops/worktree/newWorktree.ts',
      code: "o.type === 'blob' && byOid.has(o.oid) (onPack); object.type === 'blob' && byOid.has(object.oid)",
      mutants: "true for o.type === 'blob'; true, || and true for object.type === 'blob' in the loop",
      reason:
        'byOid holds only blob ids, and write() skips an id byOid no longer holds: only the reads of the pack differ',
    },
    {
      file: 'workers/ops/worktree/newWorktree.ts',
      code: 'report(true); (the first, after the fetch)',
      mutants: 'false',
      reason: 'no report ran while fetching, so lastReport is 0 and the interval holds nothing back',
    },
    {
      file: 'workers/ops/worktree/newWorktree.ts',
      code: '(!force && now - lastReport < PROGRESS_INTERVAL_MS) (report)',
      mutants: '< as <=; now - lastReport < PROGRESS_INTERVAL_MS as true',
      reason:
        'the rate of the counts only: <= differs at exactly 50 ms, and true leaves the forced first and last counts, which a machine reading each file under 50 ms also sends',
    },
    {
      file: 'workers/ops/worktree/newWorktree.ts',
      code: '() => false (hasNoWorktree, stat failed)',
      mutants: '() => undefined',
      reason: 'undefined is as falsy as false where index is tested',
    },
    // pull.ts (issue 26, session 10, mutpull10)
    {
      file: 'workers/ops/worktree/pull.ts',
      code: 'needed.length > 0 (startConflictedMerge, before ensureBlobs)',
      mutants: 'true; >= 0',
      reason: 'ensureBlobs of no blob returns before it asks anything (as on line 131)',
    },
    {
      file: 'workers/ops/worktree/pull.ts',
      code: 'if (!t || o?.oid === t.oid) return []; (blobsToTake)',
      mutants: 'o?.oid === t.oid as false',
      reason:
        'a name the same on both sides: its folder holds nothing new, and its file is ours, stored by the checkout, which ensureBlobs does not ask for',
    },
    {
      file: 'workers/ops/worktree/pull.ts',
      code: 'x.mode !== MODE_TREE_PADDED (isFile)',
      mutants: 'true',
      reason:
        "a tree reaches it only as a merge's base (ours' and theirs' folders descend first), and a blob:none clone holds every tree: ensureBlobs asks nothing for it",
    },
    // checkout.ts (issue 26, session 11, lead11)
    {
      file: 'workers/ops/worktree/checkout.ts',
      code: 'err instanceof MissingObjectError (blobFetchFailed)',
      mutants: 'true',
      reason: 'another error has no oid: no file matches undefined, and it is returned as it is',
    },
    {
      file: 'workers/ops/worktree/checkout.ts',
      code: '[...files].find(([, f]) => f.oid === err.oid)?.[0]; path ? err.withPath(path) : err (blobFetchFailed)',
      mutants: 'path as true, ?.[0] as [0]',
      reason:
        'the checkout asks only for blobs its files name, and a MissingObjectError names one it asked for: a file always matches',
    },
    // workers/pack/packReader.ts (issue 26, session 12, mutpack12)
    {
      file: 'workers/pack/packReader.ts',
      code: 'this.inflater.outPos !== entry.size (inflate)',
      mutants: 'false',
      reason:
        'the inflater returns INFLATE_DONE only from its trailer, which throws first for a stream that ends short of the declared size (out holds exactly that size, so no window)',
    },
    // newWorktree.ts (issue 26, session 12, lead12)
    {
      file: 'workers/ops/worktree/newWorktree.ts',
      code: 'if (!paths) return; (write)',
      mutants: 'false',
      reason:
        'write is given only ids byOid holds (onPack checks byOid.has, the last loop walks its keys): paths is never undefined',
    },
    {
      file: 'workers/ops/worktree/newWorktree.ts',
      code: 'if (signal?.aborted) throw abortedError(); (place)',
      mutants: 'false, block emptied',
      reason:
        'a cancel is still seen by ensureBlobs, by throwIfAborted before each stored blob and by the caller before it names a file: only later',
    },
    {
      file: 'workers/ops/worktree/newWorktree.ts',
      code: "type !== 'blob' || writeError !== null (onObject)",
      mutants: 'false, both',
      reason:
        'a blob request brings only blobs; once a write failed, what is hooked waits in a queue that skips its work, and the failure is thrown as before',
    },
    {
      file: 'workers/ops/worktree/newWorktree.ts',
      code: "object.type === 'blob' && byOid.has(object.oid) (onPack, the loop)",
      mutants: 'true',
      reason:
        'write returns for an id byOid no longer holds, and a blob pack holds only blobs: only reads for nothing',
    },
    // push.ts, lines 417-463 (issue 26, session 13, lead13)
    {
      file: 'workers/ops/sync/push.ts',
      code: "() => ''",
      mutants: '"Stryker was here!"',
      reason:
        'packed-refs missing: parsePackedRefs skips a line that is neither a ref nor a peeled id, so the text read as any non-ref line gives no refs, as empty text does',
    },
    // mergeState.ts (issue 26, session 16: the modes a conflicted merge writes)
    {
      file: 'workers/ops/worktree/mergeState.ts',
      code: '!onlyTheirs && ours && theirs (setMergedModes, a change merged clean)',
      mutants: '!onlyTheirs || ours',
      reason:
        "it adds only changes of theirs alone, whose mode by the rule is theirs', the mode setIndexEntry already wrote; a change of both with no ours is always a conflict",
    },
    {
      file: 'workers/ops/worktree/mergeState.ts',
      code: 'ours.mode === base?.mode (setMergedModes)',
      mutants: 'base.mode',
      reason:
        'a file both changed that merged clean has a base: added on both sides with different bytes is a conflict (no base text to merge from)',
    },
    // pull.ts / mergeState.ts (issue 26, session 13, pull13)
    {
      file: 'workers/ops/worktree/pull.ts',
      code: 'if (fromReaches.has(oid)) continue; (countCommits, markParents)',
      mutants: 'false',
      reason:
        'a commit marked again marks again parents already marked: the same set, only more steps (history is acyclic)',
    },
    {
      file: 'workers/ops/worktree/mergeState.ts',
      code: "author: { name: 'Blobless', email: 'blobless@localhost' } (writeConflictedMerge)",
      mutants: 'both strings ""',
      reason:
        "only a merge commit carries the author: a conflicted merge makes none, and one that did not stop is refused (INTERNAL) with its commit named by nothing; '' passes isomorphic-git's check (assignDefined keeps it)",
    },
    {
      file: 'workers/ops/worktree/mergeState.ts',
      code: '!ours.has(p) (abortMergeState)',
      mutants: 'true',
      reason:
        "isomorphic-git's merge marks a conflict only where each side is a blob or absent: entryAt gives the walk's {oid, mode}, or null, again",
    },
    {
      file: 'workers/ops/worktree/mergeState.ts',
      code: "tree.find(...)?.mode, mode ?? '100644' (entryAt)",
      mutants: 'no ?., \'100644\' as ""',
      reason:
        'readBlob found the path in this commit, so its folder holds its entry: find never comes back empty',
    },
    {
      file: 'workers/ops/worktree/mergeState.ts',
      code: 'e.oid === oid (entryAt, the find)',
      mutants: 'true',
      reason:
        "a folder holds one entry of a name, and readBlob gave that entry's id: the name alone finds it",
    },
    {
      file: 'workers/ops/worktree/mergeState.ts',
      code: 'catch { return null; } (entryAt)',
      mutants: 'block emptied (undefined)',
      reason: "abortMergeState reads undefined as null: side?.mode, else if (side), setIndexEntry's side ?",
    },
    {
      file: 'workers/ops/worktree/mergeState.ts',
      code: 'the fs.unlink of the path before fs.symlink (writeWorkingFile)',
      mutants: 'its template string emptied',
      reason:
        'its only caller (abortMergeState) removed the path just before: the unlink finds nothing either way',
    },
    // fetch.ts 146-320 (issue 26, session 13, fetch13)
    {
      file: 'workers/ops/sync/fetch.ts',
      code: 'opts.deepen > 0 (in opts.deepen && opts.deepen > 0)',
      mutants: 'opts.deepen >= 0',
      reason:
        'reached only when opts.deepen is truthy, so never 0 (nor NaN): >= 0 and > 0 agree on every such number',
    },
    {
      file: 'workers/ops/sync/fetch.ts',
      code: 'opts.depth > 0 (in opts.depth && opts.depth > 0)',
      mutants: 'opts.depth >= 0',
      reason:
        'reached only when opts.depth is truthy, so never 0 (nor NaN): >= 0 and > 0 agree on every such number',
    },
    // lazyBlobs.ts, lines 361-519 (issue 26, session 13, lead13)
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: "{ once: true } (the call's abort listener)",
      mutants: 'false; {}',
      reason: 'an AbortSignal fires abort once, and the finally removes the listener whatever happened',
    },
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: "if (onAbort) signal?.removeEventListener('abort', onAbort) (finally)",
      mutants: "true; '' for 'abort'",
      reason:
        "the Promise executor sets onAbort before anything else runs, so it is always set; a listener left on the caller's signal resolves a promise nobody awaits any more: memory only",
    },
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: 'if (onPack) for (const batch of waitedFor) batch.packListeners.delete(onPack) (finally)',
      mutants: 'true',
      reason:
        'without onPack nothing was added, and deleting undefined from a set that never holds it does nothing',
    },
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: 'Math.min(size, count - i * size) (batchSizes, a fixed size)',
      mutants: 'count + i * size; i / size',
      reason:
        "the number of batches is Math.ceil(count / size) either way, and each takes fresh.slice(start, start + size): the last slice stops at the list's end, so a size past it gives the same batch",
    },
    // pull.ts, lines 301-378: countCommits as limit_list (issue 26, session 14, lead14)
    {
      file: 'workers/ops/worktree/pull.ts',
      code: 'if (fromReaches.has(oid)) continue; (markParents)',
      mutants: 'false',
      reason:
        "commits form no cycle, so the walk still ends, and adding an oid the set holds changes nothing: the skip only spares re-walking parents already marked (git's own check, for its cost)",
    },
    {
      file: 'workers/ops/worktree/pull.ts',
      code: 'seen.get(oid)?.parents ?? [] (markParents)',
      mutants: '["Stryker was here"]',
      reason:
        "for a commit not read yet it marks a string no commit has as from's: nothing ever reads or counts it",
    },
    // pull.ts: blobsForMerge, mergeRefusals, startConflictedMerge (issue 26, session 15, pull178 rerun)
    {
      file: 'workers/ops/worktree/pull.ts',
      code: 'await ensureWorktree(ctx, repoId, { signal }) (startConflictedMerge)',
      mutants: '{}',
      reason:
        'status() ran ensureWorktree just before (the index exists, nothing is checked out here); an abort is then caught by ensureBlobs or the throwIfAborted after it: ABORTED either way, nothing written',
    },
    {
      file: 'workers/ops/worktree/pull.ts',
      code: "paths.length > 0 ? `both changed <shown>` : 'both changed a path', and refused.length > 0 ? [...whys] : ['shape'] (mergeNotSupported)",
      mutants: 'each: true; >= 0; the fallback ("" for the text, [] for the reasons)',
      reason:
        'an empty list comes only from a MergeNotSupportedError mergeRefusals did not foresee, and each case mergeTree throws it in is foreseen (a test of each checks the message)',
    },
    {
      file: 'workers/ops/worktree/pull.ts',
      code: 'isTree(x) && isTree(base) (changedFrom)',
      mutants: 'false',
      reason:
        "two folders reach it only where the refusal walk's `isTree(o) && isTree(t)` answers next, or as a side that is the base's own folder (same oid and mode, so unchanged either way): a folder changed against the base's is walked into before",
    },
    {
      file: 'workers/ops/worktree/pull.ts',
      code: 'isTree(o) || isTree(t) (blobsForMerge)',
      mutants: '&&; either half false',
      reason:
        'where one side alone is a folder the file rule below takes nothing either (isFile of a folder is false), and it is then walked into nowhere',
    },
    {
      file: 'workers/ops/worktree/pull.ts',
      code: "both / both && !keptFolder(o, b) && !keptFolder(t, b) (blobsForMerge's descent)",
      mutants: 'any that walks into more folders: both true or ||, the test true or ||',
      reason:
        'walks more folders only: the file rule takes a blob only where both sides changed a file, so a folder one side kept or lacks yields none, and a blob:none clone holds every tree (nothing more is fetched)',
    },
    {
      file: 'workers/ops/worktree/pull.ts',
      code: 'if (isTree(o) && isTree(t)) return [] (mergeRefusals)',
      mutants: 'false; ["Stryker was here"]',
      reason:
        "two folders never get there: they are walked into (below is true) unless one is the base's own, whose changedFrom is false a line before",
    },
    {
      file: 'workers/ops/worktree/pull.ts',
      code: 'b && !o && !t && (...) (mergeRefusals, deleted by both)',
      mutants: 'b as true',
      reason:
        'with neither side holding the name the base holds it (the walk meets only names some side holds), so b is never undefined there',
    },
    // lazyBlobs.ts (issue 26, session 14, surv14b)
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: "outcomes === 'aborted' (in: outcomes === 'aborted' || signal?.aborted)",
      mutants: "false (what '' for 'aborted', listed in session 8, does too)",
      reason:
        "only the abort listener resolves 'aborted', and only once the signal fired; an AbortSignal stays aborted, so signal?.aborted alone is true then",
    },
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: "err instanceof OperationError && err.code === 'ABORTED' (isAbort)",
      mutants: '||',
      reason:
        "isAbort sees only batches' errors, where either side alone is true just for runBatch's and cancel's abortedError() (session 9's entry), so either side is the whole test",
    },
    {
      file: 'workers/ops/sync/lazyBlobs.ts',
      code: '(err instanceof WireError || err instanceof PackError) && err.limit !== undefined (missingError)',
      mutants: 'true for the first side',
      reason:
        "only WireError and PackError have a limit: any other error's is undefined, so the second side alone is false for it",
    },
    // session 16 audit (issue 26, audit16)
    {
      file: 'workers/pack/packStreamParser.ts',
      code: "detail.replace(/\\.$/, '') (corrupt)",
      mutants: '/\\./',
      reason:
        'every detail corrupt() is given holds one full stop at most, as its last character: the first dot is the last',
    },
    {
      file: 'workers/pack/packStreamParser.ts',
      code: "'PACK_TRAILING_DATA' (checkEnd, last throw)",
      mutants: '"" (no test reaches it)',
      reason:
        'unreachable: checkTrailerEarly refuses bytes after a matching trailer on the push that brings them',
    },
    {
      file: 'workers/ops/worktree/newWorktree.ts',
      code: "type !== 'blob' || writeError !== null (onObject)",
      mutants: '&&',
      reason:
        "a blob request brings only blobs, so type !== 'blob' is false and the && with it too: the pair made false, listed above",
    },
    {
      file: 'workers/ops/worktree/checkout.ts',
      code: 'noUpdateHead: true (withOtherConflicts, the dry run)',
      mutants: 'false',
      reason:
        'ref is target.commit, a commit id: isomorphic-git then only resolves it to itself, and a dry run returns before HEAD is written',
    },
    {
      file: 'workers/ops/worktree/checkout.ts',
      code: 'track: false (withOtherConflicts, the dry run)',
      mutants: 'true',
      reason:
        'ref is a 40-hex commit id, which GitRefManager.resolve returns as it is: track is read only for a ref not found',
    },
    {
      file: 'workers/ops/worktree/checkout.ts',
      code: 'dryRun: true (withOtherConflicts)',
      mutants: 'false',
      reason:
        "a real run in its place writes inside the checkout's writeAllOrNothing batch, and the refusal it builds is then thrown out of that batch, which undoes every write",
    },
    {
      file: 'workers/ops/worktree/checkout.ts',
      code: 'conflictPaths(err) ?? [] (withOtherConflicts, the dry run)',
      mutants: '["Stryker was here"] for []',
      reason:
        "the dry run reads only what the refusal's walk has just read (the target's trees, the index, the files' stats), so no failure but a conflict list is known to reach it",
    },
  ],
  equivalentMutants: [
    {
      file: 'workers/ops/sync/refsWarmUp.ts',
      code: 'n + 1',
      reason:
        'any n that keeps the ids distinct and none all zeros does: n - 1 gives -1 for the first, a valid id',
    },
    {
      file: 'workers/ops/sync/refsWarmUp.ts',
      code: '{ url: WARM_UP_URL }',
      reason: 'planRefs names the url only in the errors it throws, and the synthetic answer raises none',
    },
    {
      file: 'workers/store/packedRefs.ts',
      code: "if (line === '' || line.startsWith('#')) continue;",
      reason:
        'a fast path: an empty or "#" line matches neither "^" nor REF_LINE, which starts with an id, and is skipped',
    },
    {
      file: 'workers/model/refName.ts',
      code: 'i < name.length',
      reason: 'i <= length reads charCodeAt(length), NaN, which no character test matches',
    },
    {
      file: 'workers/model/commitQueue.ts',
      code: 'q.time === entry.time && q.seq > entry.seq',
      reason: 'seq grows with every push, so no queued item has a larger one: the clause is always false',
    },
    {
      file: 'workers/ops/sync/negotiator.ts',
      code: 'entry.parents ?? []',
      reason: "#push sets parents to the commit's list or [], never null: the fallback is never taken",
    },
    {
      file: 'workers/ops/sync/negotiator.ts',
      code: 'shallow: Iterable<string> = []',
      reason: 'a default shallow list holding a made-up string names no commit an object id can be',
    },
    {
      file: 'workers/wire/pktLine.ts',
      code: 'if (this.#failure) throw this.#failure;',
      reason: '#peekLength throws before it moves the read position: parsing again throws an equal error',
    },
    {
      file: 'workers/wire/pktLine.ts',
      code: 'if (!(error instanceof WireError)) throw error;',
      reason: '#next throws nothing but the WireErrors of #peekLength, so the guard never lets one through',
    },
    {
      file: 'workers/wire/pktLine.ts',
      code: 'unread > 0',
      reason: 'an empty chunk left in the queue is stepped over by #peekLength and #skip, as an empty queue',
    },
    {
      file: 'workers/wire/pktLine.ts',
      code: 'length < HEADER_LENGTH',
      reason: '#peekLength refuses a length of 4, so <= takes no length < does not',
    },
    {
      file: 'workers/wire/pktLine.ts',
      code: 'length === 2',
      reason: '#peekLength refuses 3 and 4, so 2 is the only length left below 4 here',
    },
    {
      file: 'workers/wire/pktLine.ts',
      code: 'chunkIndex < this.#chunks.length',
      reason: '#invalidLength runs only with 4 bytes buffered: it has quoted four before the queue ends',
    },
    {
      file: 'workers/wire/pktLine.ts',
      code: `if (this.#first === this.#chunks.length) { this.#chunks = []; this.#first = 0; }
        else if (this.#first >= 64 && this.#first * 2 >= this.#chunks.length) {
        this.#chunks = this.#chunks.slice(this.#first); this.#first = 0; }`,
      reason: 'when spent chunks are dropped changes only the memory held: #first skips them either way',
    },
    {
      file: 'workers/wire/pktLine.ts',
      code: 'data.length > 0',
      reason: "an empty packet's data[-1] is undefined, not LF: its text is empty either way",
    },
    {
      file: 'workers/wire/pktLine.ts',
      code: 'data.length < 4',
      reason: 'a packet under 4 bytes fails the data[3] test anyway: undefined is not a space',
    },
    {
      file: 'workers/wire/pktLine.ts',
      code: 'byte >= 0x30',
      reason: 'a byte below "0" gives a negative digit, which the caller refuses as it refuses -1',
    },
    {
      file: 'workers/wire/fetchResponse.ts',
      code: 'let lines: string[] = [];',
      reason: "every section header sets lines to [] before a section's first line is read",
    },
    {
      file: 'workers/pack/treeCheck.ts',
      code: "oid: ''",
      reason: "done() sets every entry's oid before checkTree returns",
    },
    {
      file: 'workers/pack/treeCheck.ts',
      code: "name: ''",
      reason: "the trie root's name is never shown: a path through links lists nodes.slice(1)",
    },
    {
      file: 'workers/wire/capabilities.ts',
      code: 'first?.type',
      reason: 'a non-empty body decodes to one packet at least, or throws: first is never undefined',
    },
    {
      file: 'workers/pack/crc32.ts',
      code: 'end - 8',
      reason: 'a fast path: with stop past the end, the byte-at-a-time loop computes the same CRC',
    },
    {
      file: 'workers/pack/delta.ts',
      code: 'len < 32',
      reason: 'both branches copy the same bytes: the loop is only faster for short copies',
    },
    {
      file: 'workers/pack/delta.ts',
      code: 'op < 32',
      reason: 'both branches copy the same bytes: the loop is only faster for short inserts',
    },
    {
      file: 'workers/pack/packIndex.ts',
      code: 'new Array<string>(n)',
      reason: 'every slot is assigned below: the size given only spares growing',
    },
    {
      file: 'workers/pack/packReader.ts',
      // The statement, not its test: the loop's own `chain.length > 0` above it matched too, and its mutants
      // (the deltas never applied) are killed.
      code: 'if (chain.length > 0) this.remember(deltaOffset, base);',
      reason: 'which results are cached changes only the time a later read takes, never what it returns',
    },
    {
      file: 'workers/pack/packReader.ts',
      code: `{
    if (object.data.length > BASE_CACHE_BYTES / 4) return;
    if (this.cached + object.data.length > BASE_CACHE_BYTES) {
      this.cache.clear();
      this.cached = 0;
    }
    this.cache.set(offset, object);
    this.cached += object.data.length;
  }`,
      reason: "remember's bounds change the memory and time a read costs, never what it returns",
    },
    // The rest of the pack (issue 26, session 5).
    {
      file: 'workers/pack/timeSlice.ts',
      code: 'this.waiting.shift()?.()',
      reason: 'a message is posted only for a yield that waits, so the queue is never empty when one arrives',
    },
    {
      file: 'workers/pack/warmUp.ts',
      code: '{ objects: asCheckout }',
      reason:
        'only the checkout round reads the list of objects; keeping it in the other rounds costs only memory',
    },
    {
      file: 'workers/pack/warmUp.ts',
      code: '[o.oid, o.offset]',
      reason:
        'PackReader asks for an offset by id only for a ref-delta, and the warm-up pack has ofs-deltas only',
    },
    {
      file: 'workers/pack/warmUp.ts',
      code: '(oid) => offsets.get(oid)',
      reason:
        'PackReader asks for an offset by id only for a ref-delta, and the warm-up pack has ofs-deltas only',
    },
    {
      file: 'workers/pack/packReader.ts',
      code: 'new Inflater(false)',
      reason:
        "the pack's Adler-32s were checked when it arrived (packIngester): checking again only costs time",
    },
    // workers/pack: packStreamParser, deltaResolver, packIngester (issue 26, session 5)
    {
      file: 'workers/pack/packStreamParser.ts',
      code: 'new Uint8Array(64 * 1024)',
      reason: "the scratch grows to each entry's size before use: its first size changes only when it grows",
    },
    {
      file: 'workers/pack/packStreamParser.ts',
      code: `{
    this.scratch = new Uint8Array(0);
    this.window = null;
    this.arrivals = null;
  }`,
      reason: 'release frees memory only: the parser is never used after finish',
    },
    {
      file: 'workers/pack/packIngester.ts',
      code: 'options.deltaBaseCacheLimit ?? 96 * 1024 * 1024',
      reason: 'the cache limit changes only how often a dropped base is rebuilt, never what it resolves to',
    },
    {
      file: 'workers/pack/packIngester.ts',
      code: `{
      this.parser.release();
      this.resolver.release();
    }`,
      reason: 'releasing frees memory only: neither half is used after finish',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: `{
    this.ring?.free();
    this.ring = null;
    this.arrivalScratch = new Uint8Array(0);
  }`,
      reason:
        'end frees memory only: the parser tells nothing after it, and resolving after it reads no ring',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: `{
    this.ring = null;
  }`,
      reason: 'release frees memory only: nothing arrives after finish',
    },
    // workers/pack/deltaResolver.ts, lines 131-553 (issue 26, session 6)
    {
      file: 'workers/pack/deltaResolver.ts',
      code: '64 * 1024',
      reason:
        "the first sizes of the arrival and delta scratches, which grow to each entry's size before use",
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: "throw new Error('Pack entry changed after receiving');",
      reason:
        'unreachable: every entry inflated whole once (or was deflated by completeThinPack), and nothing rewrites its bytes',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: `throw new Error(\`Resolved \${resolved} of \${total} deltas\`);`,
      reason:
        "unreachable: an ofs-delta's base comes before it, so every unresolved chain ends in an unresolved ref-delta, and the loop above throws for it",
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'this.entries.parsed + pending.length > this.entries.capacity',
      reason:
        'growing the tables for every base up front only saves time (ensureCapacity grows them per base); a larger capacity is only cut to what is needed',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: '-1',
      reason:
        "an appended base's bases[] and refParent's fill: neither is read before written (parentOf runs on deltas only, whose refParent is set when resolved)",
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'refCount > 0 ? n : 0',
      reason: "refParent's length: with no ref-delta it is never read, with one it is n",
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'root < listed',
      reason:
        'needed is set only when the pack has no ref-delta, so no base was appended and every root is listed',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: `if ((++walked & 63) === 0) {
          if (performance.now() - lastYield > YIELD_INTERVAL_MS) {
            await yieldToEventLoop();
            throwIfAborted(this.signal);
            lastYield = performance.now();
          }
        }`,
      reason:
        'yielding only lets other tasks run between deltas; the abort is checked after every delta, just before',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: '[children.ofsStart, children.ofsChildren, children.refOrder, children.refParent]',
      reason: 'releaseTables frees memory only: nothing reads the lists after resolving',
    },
    // workers/store: repoFs, errors (issue 26, session 6, mutstore3)
    {
      file: 'workers/store/repoFs.ts',
      code: "if (!backend) throw new Error('Files are staged ahead only through RepoFsBackend');",
      reason:
        'RepoFileSystems makes every file system with RepoFsBackend: only benchmarks go without (fixInodeWalk)',
    },
    {
      file: 'workers/store/repoFs.ts',
      code: '() => 0',
      reason:
        'init replaces the walk before any inode is reserved: reserveInode is only called on an active file system',
    },
    {
      file: 'workers/store/repoFs.ts',
      code: '{ uid: 1, gid: 1 }',
      reason: "CacheFS's defaults are uid 1 and gid 1: the object only says so",
    },
    {
      file: 'workers/store/errors.ts',
      code: '{ return undefined; }',
      reason: 'the catch block ends the function: without its return, it returns undefined as well',
    },
    // workers/store: repair (issue 26, session 6, mutstore3)
    {
      file: 'workers/store/repair.ts',
      code: '{ names = []; }',
      reason: 'names is [] already when readdir throws: the catch only says so',
    },
    {
      file: 'workers/store/repair.ts',
      code: '{ expectedSizeHint: pack.length }',
      reason: 'only the first size of the receive buffer, which grows to whatever arrives',
    },
    {
      file: 'workers/store/repair.ts',
      code: '{ return false; }',
      reason:
        'the catch block ends the function: without its return it returns undefined, as falsy to the caller',
    },
    {
      file: 'workers/store/repair.ts',
      code: '{ return undefined; }',
      reason: 'the catch block ends the function: without its return, it returns undefined as well',
    },
    // workers/ops/sync/push.ts (issue 26, session 7, mutpush7)
    {
      file: 'workers/ops/sync/push.ts',
      code: "throw new OperationError('INTERNAL', 'isomorphic-git built no pack.');",
      reason:
        "never runs: isomorphic-git's packObjects returns the pack whenever it is not asked to write it",
    },
    {
      file: 'workers/ops/sync/push.ts',
      code: '{ return false; }',
      reason:
        'the catch block ends isCommit: without its return it returns undefined, as falsy to both callers',
    },
    // workers/pack/deltaResolver.ts, lines 254-551 (issue 26, session 7, mutdelta7)
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'this.entries.parsed + 1',
      reason:
        'completeThinPack grew the tables for every pending base up front, so ensureCapacity never grows them here',
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'n - 1',
      reason:
        "childLists' backward loops: from n + 1 they first read two rows past the tables (capacity is at most n), undefined, which neither counts",
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: 'deltaScratch.length * 2',
      reason: "the delta scratch's growth step: it grows to at least the delta's size either way",
    },
    {
      file: 'workers/pack/deltaResolver.ts',
      code: '{ pool.give(result); }',
      reason: 'an object with no children not given back to the pool: memory only',
    },
    // workers/ops/worktree/pull.ts, lines 64-170 (issue 26, session 8, mutpull8)
    {
      file: 'workers/ops/worktree/pull.ts',
      code: "'/'",
      reason: "with abortOnConflict isomorphic-git's merge writes no working file: its dir is not used",
    },
    {
      file: 'workers/ops/worktree/pull.ts',
      code: 'if (signal?.aborted) throw abortedError();',
      reason:
        "a cancel seen here came from the batch's own throwIfAborted (rethrown as it is), or is seen by startConflictedMerge's check before it writes",
    },
    // workers/ops/sync/fetch.ts lines 461-601 (issue 26, session 9, mutfetch9b)
    {
      file: 'workers/ops/sync/fetch.ts',
      code: '{ // Not stored (beyond a shallow boundary) or not a commit: no line of history to walk. return null; }',
      reason:
        "commitReader's callers (the negotiator, isAncestor) read undefined as they read null: no commit",
    },
    {
      file: 'workers/ops/sync/fetch.ts',
      code: '() => null',
      reason:
        "the three (HEAD, peel, readLocalObject's second read) are only tested for truth: undefined reads as null",
    },
    {
      file: 'workers/ops/sync/fetch.ts',
      code: '{ return await read(); }',
      reason:
        'ensureBlobs fetches only what the packs and loose objects lack: a base found is read the same after it',
    },
    // workers/ops/worktree/pull.ts, mergeState.ts (issue 26, session 9, mutpull9)
    {
      file: 'workers/ops/worktree/mergeState.ts',
      code: "{ encoding: 'utf8' }",
      reason:
        'lightning-fs gives the bytes it reads without an encoding a toString that decodes them (DefaultBackend.readFile): String() makes the same text',
    },
    {
      file: 'workers/ops/worktree/mergeState.ts',
      code: 'e.data?.filepaths ?? []',
      reason: "isomorphic-git's MergeConflictError always sets data.filepaths",
    },
    {
      file: 'workers/ops/worktree/mergeState.ts',
      code: 'String(t).trim()',
      reason: "MERGE_HEAD is one id and a newline (git's and ours): split('\\n')[0] alone gives the id",
    },
    {
      file: 'workers/ops/worktree/mergeState.ts',
      code: '() => null',
      reason:
        'the missing MERGE_HEAD and the missing index: undefined is as falsy as null where each is tested (!head, bytes ?)',
    },
    // push.ts (issue 26, session 10, mutpush10)
    {
      file: 'workers/ops/sync/push.ts',
      code: "{ // Past a shallow clone's boundary: the walk stops there. read.set(oid, null); }",
      reason:
        'a commit past a shallow boundary left unset reads as undefined, as falsy as null to `if (!commit)`, and each later load fails again the same way',
    },
    // checkout.ts / newWorktree.ts (issue 26, session 10, mutco10)
    {
      file: 'workers/ops/worktree/newWorktree.ts',
      code: 'hooks.steps?.measure',
      reason: 'checkout, its one caller, always passes steps',
    },
    {
      file: 'workers/ops/worktree/newWorktree.ts',
      code: '{ policy: { maxBatchBytes: NEW_WORKTREE_BATCH_BYTES } }',
      reason:
        "memory only: a request's byte cap that the tests' few KB of blobs never reach; what it trades is the measured table above NEW_WORKTREE_BATCH_BYTES",
    },
    {
      file: 'workers/ops/worktree/newWorktree.ts',
      code: '() => [] as string[]',
      reason: "readdir('/') never fails: the root always exists",
    },
    {
      file: 'workers/ops/worktree/newWorktree.ts',
      code: 'deferMaintenance: true',
      reason:
        "ensureBlobs' own merge would start once its fetch ends: the first checkout waits for it before naming anything, or under the API's lock the merge waits for the lock; it never writes into the batch, and the checkout sets one off after anyway",
    },
    // pull.ts (issue 26, session 10, mutpull10)
    {
      file: 'workers/ops/worktree/pull.ts',
      code: '() => null',
      reason:
        "a commit not held (countCommits' enqueue) and a missing upstream: undefined is as falsy as null where each is tested (if (c), !theirs)",
    },
    // checkout.ts (issue 26, session 11, lead11)
    {
      file: 'workers/ops/worktree/checkout.ts',
      code: 'if (intoNothing) forgetLoadedPacks(repo);',
      reason:
        'memory only: it lets go of the packs isomorphic-git parsed; any read after parses again what it needs, so every result is the same',
    },
  ],
};
