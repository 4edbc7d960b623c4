import type { Author } from '../workers/engine/index.ts';

// The commit author, kept in this browser's localStorage like a global git config's user.name/user.email.
const KEY = 'blobless.author';

export function loadAuthor(): Author {
  try {
    const saved = JSON.parse(localStorage.getItem(KEY) ?? '{}') as Partial<Author>;
    return { name: saved.name ?? '', email: saved.email ?? '' };
  } catch {
    return { name: '', email: '' };
  }
}

export function saveAuthor(author: Author): void {
  localStorage.setItem(KEY, JSON.stringify(author));
}
