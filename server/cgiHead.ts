/** The header block a CGI script writes before its body (RFC 3875 section 6.2). */
export interface CgiHead {
  status: number;
  statusText: string | undefined;
  headers: [name: string, value: string][];
  /** Offset of the first body byte in the buffer that was parsed. */
  bodyStart: number;
}

/**
 * Parses the CGI header block at the start of `buf`. Returns undefined while the blank line that ends the
 * block has not arrived yet, so callers can keep appending chunks. git http-backend ends lines with CRLF,
 * but RFC 3875 allows a bare LF, so both are accepted.
 */
export function parseCgiHead(buf: Uint8Array): CgiHead | undefined {
  const bytes = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const headers: [string, string][] = [];
  let status = 200;
  let statusText: string | undefined;
  let pos = 0;
  for (;;) {
    const eol = bytes.indexOf(0x0a, pos);
    if (eol < 0) return undefined;
    const end = eol > pos && bytes[eol - 1] === 0x0d ? eol - 1 : eol;
    const line = bytes.toString('latin1', pos, end);
    pos = eol + 1;
    if (line === '') return { status, statusText, headers, bodyStart: pos };
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === 'status') {
      const match = /^(\d{3})\s*(.*)$/.exec(value);
      if (match) {
        status = Number(match[1]);
        statusText = match[2] || undefined;
      }
    } else {
      headers.push([name, value]);
    }
  }
}
