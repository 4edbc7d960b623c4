export type GitServerErrorCode = 'SERVER_LISTEN_FAILED' | 'SERVER_ROOT_MISSING' | 'SERVER_GIT_MISSING';

/** The dev/test git server could not start. */
export class GitServerError extends Error {
  override readonly name = 'GitServerError';
  constructor(
    readonly code: GitServerErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export type FixtureErrorCode = 'FIXTURE_BUILD_FAILED' | 'FIXTURE_INVALID_OPTIONS';

/** A fixture repository could not be generated. */
export class FixtureError extends Error {
  override readonly name = 'FixtureError';
  constructor(
    readonly code: FixtureErrorCode,
    message: string,
  ) {
    super(message);
  }
}
