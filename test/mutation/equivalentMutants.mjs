// Stryker ignorer: the mutants worked through and judged equivalent are listed in stryker.config.mjs
// (`equivalentMutants`: file, the exact source of the node, the reason), not as comments in the engine's code.
// A node listed is ignored with all its mutants, so an entry names the smallest node whose mutants all behave
// as the original does; the reason shows in the report as the mutant's status text. Runs of white space
// compare as one space, so a statement over several lines can be listed on one.
import { commonTokens, declareClassPlugin, PluginKind } from '@stryker-mutator/api/plugin';

class EquivalentMutants {
  static inject = [commonTokens.options];

  /** @param {{ equivalentMutants?: { file: string; code: string; reason: string }[] }} options */
  constructor(options) {
    this.entries = options.equivalentMutants ?? [];
  }

  /** @param {any} path a babel NodePath */
  shouldIgnore(path) {
    const fileName = String(path.hub?.file?.opts?.filename ?? '').replaceAll('\\', '/');
    let source;
    for (const entry of this.entries) {
      if (!fileName.endsWith(`/${entry.file}`)) continue;
      source ??= oneLine(path.getSource());
      if (source === oneLine(entry.code)) return `Equivalent: ${entry.reason}`;
    }
    return undefined;
  }
}

/** @param {string} code */
const oneLine = (code) => code.replace(/\s+/g, ' ');

export const strykerPlugins = [declareClassPlugin(PluginKind.Ignore, 'equivalent', EquivalentMutants)];

export const strykerValidationSchema = {
  properties: {
    equivalentMutants: {
      type: 'array',
      items: {
        type: 'object',
        required: ['file', 'code', 'reason'],
        properties: { file: { type: 'string' }, code: { type: 'string' }, reason: { type: 'string' } },
        additionalProperties: false,
      },
    },
    // Survivors judged equivalent whose node also holds mutants the tests kill: ignoring the node would hide
    // those, so they stay survivors in the score, listed here with the reason (read by people, not Stryker).
    equivalentSurvivors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['file', 'code', 'mutants', 'reason'],
        properties: {
          file: { type: 'string' },
          code: { type: 'string' },
          mutants: { type: 'string' },
          reason: { type: 'string' },
        },
        additionalProperties: false,
      },
    },
  },
};
