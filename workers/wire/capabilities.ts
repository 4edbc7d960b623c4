/**
 * The answer to `GET $GIT_URL/info/refs?service=git-upload-pack`: a protocol v2 capability advertisement,
 * or, from a server that ignored our `Git-Protocol: version=2` header, a v0/v1 ref advertisement.
 */

import { isObjectIdHex, OBJECT_ID_HEX } from '../model/objectId.ts';
import { WireError } from './errors.ts';
import { flushSectionLines } from './flushSection.ts';
import { describePacket, type Packet, PktLineDecoder, packetText } from './pktLine.ts';

export type V2Capabilities = {
  /** The server's `agent=` value, e.g. `git/2.39.5`. Informative only (gitprotocol-v2: agent). */
  agent?: string;
  /** gitprotocol-v2: object-format: "If not specified, the server is assumed to only handle SHA-1". */
  objectFormat: string;
  /**
   * Every advertised key, commands and plain capabilities alike (v2 does not tell them apart on the wire),
   * mapped to the space-separated features of its value: `fetch` -> {shallow, wait-for-done, filter},
   * `ls-refs` -> {unborn}, `server-option` -> {}.
   */
  commands: Map<string, Set<string>>;
  /** The capability lines as sent, without the trailing LF. */
  lines: string[];
};

export type AdvertisedRef = {
  name: string;
  oid: string;
  /** For an annotated tag, the object it points to (the `<name>^{}` line that follows it). */
  peeled?: string;
};

export type InfoRefs =
  | { version: 2; capabilities: V2Capabilities }
  | {
      version: 0 | 1;
      refs: AdvertisedRef[];
      /** The capability tokens after the NUL on the first line, e.g. `multi_ack`, `symref=HEAD:refs/heads/main`. */
      capabilities: string[];
      /** From `symref=<from>:<to>` capabilities: `{ HEAD: 'refs/heads/main' }`. */
      symrefs: Record<string, string>;
      /** `shallow <oid>` lines: the server repository is itself shallow at these commits. */
      shallow: string[];
    };

const DUMB_SERVER_LINE = new RegExp(`^${OBJECT_ID_HEX}\t`);

/**
 * Parses a complete info/refs response body. `service` is the one asked for: receive-pack always answers
 * with a v0 ref advertisement (there is no v2 push).
 */
export function parseInfoRefs(
  body: Uint8Array,
  service: 'git-upload-pack' | 'git-receive-pack' = 'git-upload-pack',
): InfoRefs {
  const packets = decodeAdvertisement(body);
  let index = 0;

  // gitprotocol-http, Smart Server Response: the body opens with `# service=$servicename` and a flush.
  // git http-backend omits both when it answers in v2 (the v2 reply starts at "version 2"); GitHub sends them.
  const first = packets[0];
  if (first?.type === 'data' && packetText(first).startsWith('# service=')) {
    const advertised = packetText(first).slice('# service='.length);
    if (advertised !== service) {
      throw new WireError(
        'PROTOCOL_UNEXPECTED',
        `The server advertised the service "${advertised}" where "${service}" was requested`,
      );
    }
    if (packets[1]?.type !== 'flush') {
      throw unexpected(packets[1], `the flush packet after "# service=${service}"`);
    }
    index = 2;
  }

  const versionPacket = packets[index];
  if (versionPacket?.type === 'data') {
    const text = packetText(versionPacket);
    if (text === 'version 2') return { version: 2, capabilities: parseV2Capabilities(packets, index + 1) };
    if (text === 'version 1') return parseRefAdvertisement(packets, index + 1, 1);
    if (text.startsWith('version ')) {
      throw new WireError(
        'PROTOCOL_UNEXPECTED',
        `The server speaks git protocol ${text}, which Blobless does not understand (it speaks 0, 1 and 2)`,
      );
    }
  }
  return parseRefAdvertisement(packets, index, 0);
}

/** Whether a v2 server advertises `command`, and, if given, `feature` among its values. */
export function supports(caps: V2Capabilities, command: string, feature?: string): boolean {
  const features = caps.commands.get(command);
  if (features === undefined) return false;
  return feature === undefined || features.has(feature);
}

function decodeAdvertisement(body: Uint8Array): Packet[] {
  if (body.length === 0) {
    throw new WireError(
      'NOT_GIT',
      'The URL answered with an empty body, not like a git server: check the URL',
    );
  }
  const head = new TextDecoder().decode(body.subarray(0, 120));
  if (DUMB_SERVER_LINE.test(head)) {
    throw new WireError(
      'NOT_GIT',
      'The URL answered like a "dumb" HTTP git server (a plain info/refs file). Blobless needs a smart-HTTP ' +
        'server (git http-backend, GitHub, GitLab, ...): check the URL or the server setup',
    );
  }
  const decoder = new PktLineDecoder();
  try {
    const packets = decoder.push(body);
    decoder.end();
    return packets;
  } catch (error) {
    if (error instanceof WireError && error.code === 'PKT_LINE_INVALID' && error.byteOffset === 0) {
      throw new WireError(
        'NOT_GIT',
        `The URL did not answer like a git server: its response starts with ${JSON.stringify(head.slice(0, 40))} ` +
          'instead of git protocol data. Check the URL, and that any proxy in between passes git traffic through',
        { cause: error },
      );
    }
    throw error;
  }
}

/** What Blobless calls itself in `agent` (gitprotocol-v2 and gitprotocol-capabilities: agent). */
export const CLIENT_AGENT = 'blobless/0.1';

/** gitprotocol-v2: agent: a client must not send one unless the server advertised its own. */
export function agentFor(caps: V2Capabilities): string | undefined {
  return caps.agent ? CLIENT_AGENT : undefined;
}

/** gitprotocol-v2: Capability Advertisement: capability-list, then flush-pkt. */
function parseV2Capabilities(packets: Packet[], start: number): V2Capabilities {
  const caps: V2Capabilities = { objectFormat: 'sha1', commands: new Map(), lines: [] };
  for (const packet of flushSectionLines(packets, start, 'capability advertisement', 'capability lines')) {
    const line = packetText(packet);
    caps.lines.push(line);
    const equals = line.indexOf('=');
    const key = equals < 0 ? line : line.slice(0, equals);
    const value = equals < 0 ? '' : line.slice(equals + 1);
    caps.commands.set(key, new Set(value.split(' ').filter((feature) => feature !== '')));
    if (key === 'agent') caps.agent = value;
    if (key === 'object-format') caps.objectFormat = value;
  }
  return caps;
}

/** gitprotocol-pack: Reference Discovery (advertised-refs), and its smart-HTTP form in gitprotocol-http. */
function parseRefAdvertisement(packets: Packet[], start: number, version: 0 | 1): InfoRefs {
  const refs: AdvertisedRef[] = [];
  const shallow: string[] = [];
  let capabilities: string[] = [];
  // An empty repository: git before 2.41 sends the flush alone, without the `capabilities^{}` line.
  const lines = flushSectionLines(packets, start, 'ref advertisement', 'ref lines');
  for (const [i, packet] of lines.entries()) {
    let line = packetText(packet);
    if (i === 0) {
      // The first line carries the capability list behind a NUL.
      const nul = line.indexOf('\0');
      if (nul >= 0) {
        capabilities = line
          .slice(nul + 1)
          .split(' ')
          .filter((token) => token !== '');
        line = line.slice(0, nul);
      }
    }
    if (line.startsWith('shallow ')) {
      shallow.push(expectOid(line.slice('shallow '.length), line));
      continue;
    }
    const space = line.indexOf(' ');
    if (space < 0) throw unexpected(packet, 'a line of the form "<oid> <refname>"');
    const oid = expectOid(line.slice(0, space), line);
    const name = line.slice(space + 1);
    // no-refs = PKT-LINE(zero-id SP "capabilities^{}" NUL capability-list): not a ref.
    if (name === 'capabilities^{}') continue;
    if (name.endsWith('^{}')) {
      const tag = refs[refs.length - 1];
      if (tag === undefined || tag.name !== name.slice(0, -3)) {
        throw unexpected(packet, `a peeled line right after the ref ${name.slice(0, -3)}`);
      }
      tag.peeled = oid;
      continue;
    }
    refs.push({ name, oid });
  }

  const symrefs: Record<string, string> = {};
  for (const capability of capabilities) {
    if (!capability.startsWith('symref=')) continue;
    const pair = capability.slice('symref='.length);
    const colon = pair.indexOf(':');
    if (colon > 0) symrefs[pair.slice(0, colon)] = pair.slice(colon + 1);
  }
  return { version, refs, capabilities, symrefs, shallow };
}

function expectOid(text: string, line: string): string {
  if (!isObjectIdHex(text)) {
    throw new WireError(
      'PROTOCOL_UNEXPECTED',
      `The server sent ${JSON.stringify(line)} where a line starting with an object id was expected`,
    );
  }
  return text;
}

function unexpected(packet: Packet | undefined, expected: string): WireError {
  if (packet === undefined) {
    return new WireError(
      'RESPONSE_TRUNCATED',
      `The advertisement ended where ${expected} was expected: the response was cut short; try again`,
    );
  }
  return new WireError(
    'PROTOCOL_UNEXPECTED',
    `The server sent ${describePacket(packet)} where ${expected} was expected`,
  );
}
