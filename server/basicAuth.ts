import { createHash, timingSafeEqual } from 'node:crypto';

export interface BasicCredentials {
  user: string;
  password: string;
}

/** Whether an `Authorization: Basic ...` header carries exactly these credentials (RFC 7617). */
export function matchesBasicAuth(header: string | undefined, expected: BasicCredentials): boolean {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!match) return false;
  const given = Buffer.from(match[1], 'base64').toString('utf8');
  // Compare digests so the comparison takes the same time whatever the lengths.
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(`${expected.user}:${expected.password}`));
}

/** The user name in a Basic Authorization header, for REMOTE_USER. */
export function basicAuthUser(header: string | undefined): string | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!match) return undefined;
  const given = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = given.indexOf(':');
  return colon < 0 ? given : given.slice(0, colon);
}
