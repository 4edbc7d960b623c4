import { navigate } from '../route.ts';

export function Breadcrumbs({ path }: { path: string }) {
  const parts = path ? path.split('/') : [];
  return (
    <nav class="crumbs" aria-label="Path">
      <button type="button" class="link" onClick={() => navigate({ path: '', commit: null })}>
        root
      </button>
      {parts.map((part, i) => {
        const to = parts.slice(0, i + 1).join('/');
        return (
          <span key={to}>
            {' / '}
            {i === parts.length - 1 ? (
              <span aria-current="page">{part}</span>
            ) : (
              <button type="button" class="link" onClick={() => navigate({ path: to, commit: null })}>
                {part}
              </button>
            )}
          </span>
        );
      })}
    </nav>
  );
}
