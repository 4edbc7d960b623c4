import { explainRefNameProblem, refNameProblem } from '../../model/refName.ts';
import { OperationError } from '../common/errors.ts';

/**
 * Ref names from a server become paths under `.git/` and config section names, so a name git would refuse
 * is never used: a bad ref is skipped with a warning (git itself skips them: "ignoring ref with broken
 * name"); a bad HEAD target ends the clone, since nothing sensible can be checked out then.
 */
export function checkRemoteRefNames<R extends { name: string }>(
  refs: R[],
  headTarget: string | undefined,
  url: string,
): { kept: R[]; warnings: string[] } {
  if (headTarget !== undefined) {
    const problem = refNameProblem(headTarget);
    if (problem !== null) {
      throw new OperationError(
        'HOSTILE_REF_NAME',
        `The server at ${url} says its HEAD points to ${JSON.stringify(headTarget)}, which is not a valid ref name ` +
          `(${explainRefNameProblem(problem)}). Nothing was stored. Clone a branch by name, or report it to the server's owner.`,
      );
    }
  }
  const kept: R[] = [];
  const skipped: string[] = [];
  for (const ref of refs) {
    const problem = ref.name === 'HEAD' ? null : refNameProblem(ref.name);
    if (problem === null) kept.push(ref);
    else skipped.push(`${JSON.stringify(ref.name)} (${explainRefNameProblem(problem)})`);
  }
  const warnings: string[] = [];
  if (skipped.length > 0) {
    // A hostile server could send thousands: name a few, count the rest.
    const shown = skipped.slice(0, 5).join(', ');
    const more = skipped.length > 5 ? ` and ${skipped.length - 5} more` : '';
    warnings.push(
      `Skipped ${skipped.length === 1 ? 'a remote ref whose name' : `${skipped.length} remote refs whose names`} git would refuse: ${shown}${more}.`,
    );
  }
  return { kept, warnings };
}
