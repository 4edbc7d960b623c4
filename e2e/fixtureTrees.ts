import { execFileSync } from 'node:child_process';

/** Path to blob id of every file of `rev` in the bare repository `bare` (`git ls-tree -r`). */
export function treeOids(bare: string, rev: string): Map<string, string> {
  return new Map(
    execFileSync('git', ['ls-tree', '-r', rev], { cwd: bare, encoding: 'utf8' })
      .trim()
      .split('\n')
      .map((l) => {
        const [meta, path] = l.split('\t');
        return [path, meta.split(' ')[2]] as const;
      }),
  );
}

/**
 * Up to `count` files of `rev` whose blobs none of the `held` revisions has, one per blob, so that reading
 * each is one lazy fetch. Markdown files are left out: they show rendered, which reads them another way.
 */
export function unheldFiles(bare: string, rev: string, held: string[], count: number): string[] {
  const have = new Set(held.flatMap((r) => [...treeOids(bare, r).values()]));
  const seen = new Set<string>();
  return [...treeOids(bare, rev)]
    .filter(([path]) => !path.endsWith('.md'))
    .filter(([, oid]) => !have.has(oid) && !seen.has(oid) && seen.add(oid))
    .slice(0, count)
    .map(([path]) => path);
}
