/**
 * The environment of a git command that commits as one fixed author at `seconds` (author and committer
 * dates): a script of such commands, each a second later than the last, makes the same objects on every
 * run, and its history has an order.
 */
export function datedGitEnv(seconds: number): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GIT_AUTHOR_DATE: `${seconds} +0000`,
    GIT_COMMITTER_DATE: `${seconds} +0000`,
    GIT_AUTHOR_NAME: 'A U Thor',
    GIT_AUTHOR_EMAIL: 'author@example.com',
    GIT_COMMITTER_NAME: 'A U Thor',
    GIT_COMMITTER_EMAIL: 'author@example.com',
  };
}
