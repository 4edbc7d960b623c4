// @ts-check
// A repository cloned in Node, read, and brought up to date, kept in memory for the script's life:
//
//   node clone.mjs <repository URL> [file]       e.g. node clone.mjs https://example.org/repo.git README.md
//
// Prints the last five commits, the file, and what a fetch brought. Ctrl-C cancels the clone cleanly.
import { createEngine, isBloblessError } from 'blobless';
import { memoryStorage } from 'blobless/storage/memory';

const [url, path = 'README.md'] = process.argv.slice(2);
if (!url) {
  console.error('usage: node clone.mjs <repository URL> [file]');
  process.exit(2);
}

// Node has no IndexedDB; the memory storage needs nothing else.
const engine = createEngine({ storage: memoryStorage() });
const cancel = new AbortController();
process.once('SIGINT', () => cancel.abort());

try {
  // A partial clone (blob:none): commits and trees now, file contents when something reads them.
  const { repoId } = await engine.clone(
    { url },
    {
      signal: cancel.signal,
      onProgress: (p) => {
        if (p.phase === 'receiving')
          process.stderr.write(`\rreceiving ${p.objects} objects, ${p.bytes} bytes`);
      },
    },
  );
  process.stderr.write('\n');
  const repo = engine.repo(repoId);

  const { commits } = await repo.log({ ref: 'HEAD', limit: 5 });
  for (const commit of commits) console.log(`${commit.oid} ${commit.message.split('\n')[0]}`);

  // The one blob this needs is fetched now, in one request.
  const file = await repo.readFile({ ref: 'HEAD', path });
  console.log(`== ${path} (${file.size} bytes) ==`);
  process.stdout.write(file.bytes);

  const fetched = await repo.fetch();
  console.log(`== fetch: ${fetched.newCommits} new commits, ${fetched.updated.length} refs updated ==`);
} catch (err) {
  // Every error of the engine has a stable code to act on.
  if (!isBloblessError(err)) throw err;
  console.error(`${err.code}: ${err.message}`);
  process.exitCode = 1;
} finally {
  await engine.close();
}
