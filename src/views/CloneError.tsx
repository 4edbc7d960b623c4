import { NEXT_STEP } from '../cloneFlow.ts';

/** A failed clone: the worker's message, what to do next for its code, and the code itself. */
export function CloneError({ error }: { error: { message: string; code: string } }) {
  return (
    <div class="error" role="alert" data-testid="clone-error">
      <strong>{error.message}</strong>
      {NEXT_STEP[error.code] && <p>{NEXT_STEP[error.code]}</p>}
      <p class="muted">Error code: {error.code}</p>
    </div>
  );
}
