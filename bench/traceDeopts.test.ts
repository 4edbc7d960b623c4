import { describe, expect, it } from 'vitest';
import { parseBailouts } from './traceDeopts.ts';

// Two bailouts as Playwright logs Chromium's output with --trace-deopt-verbose (shortened), a line between.
const LOG = `2026-12-05T09:15:16.402Z pw:browser [pid=1][out] [bailout (kind: deopt-eager, reason: wrong map): begin. deoptimizing 0x3c <JSFunction parseEntryHeader (sfi = 0x3c0)>, 0x10 <Code MAGLEV>, opt id 119, bytecode offset 201]
2026-12-05T09:15:16.402Z pw:browser [pid=1][out]   reading input frame parseEntryHeader => bytecode_offset=201
2026-12-05T09:15:16.402Z pw:browser [pid=1][out]             ;;; deoptimize at <http://127.0.0.1:34081/assets/git.worker-DPl.js:28094:28>
2026-12-05T09:15:16.403Z pw:browser [pid=1][out] [bailout (kind: deopt-eager, reason: Insufficient type feedback for call): begin. deoptimizing 0x3d <JSFunction bloblessPhase_clone (sfi = 0x3d0)>, 0x11 <Code TURBOFAN_JS>, opt id 3]
2026-12-05T09:15:16.403Z pw:browser [pid=1][out]             ;;; deoptimize at <http://127.0.0.1:34081/assets/main.js:1:2> inlined at <x>`;

describe("reading V8's deoptimization trace", () => {
  it('takes each bailout with its function, tier, reason and the first place named after it', () => {
    expect(parseBailouts(LOG)).toEqual([
      {
        fn: 'parseEntryHeader',
        tier: 'MAGLEV',
        reason: 'wrong map',
        at: { file: 'git.worker-DPl.js', line: 28094 },
      },
      {
        fn: 'bloblessPhase_clone',
        tier: 'TURBOFAN_JS',
        reason: 'Insufficient type feedback for call',
        at: { file: 'main.js', line: 1 },
      },
    ]);
  });
});
