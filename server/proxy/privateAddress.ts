// Web-standard only (no node:net): the proxy's core runs on Node, Deno and Cloudflare Workers alike.

/**
 * Whether an IP address is one the CORS proxy must not reach for a stranger: loopback, private,
 * link-local, carrier-grade NAT, multicast, reserved, and every IPv6 spelling that carries one of those
 * (IPv4-compatible `::7f00:1`, mapped `::ffff:7f00:1`, translated `::ffff:0:7f00:1`, NAT64 `64:ff9b::/96`,
 * 6to4 `2002::/16`). Returns why it is refused, or null for a public address.
 */
export function privateAddressReason(address: string): string | null {
  const v4 = ipv4Bytes(address);
  if (v4) return ipv4Reason(v4);
  const bytes = address.includes(':') ? ipv6Bytes(address) : null;
  if (!bytes) return 'not an IP address';
  return ipv6Reason(bytes);
}

export function isPrivateAddress(address: string): boolean {
  return privateAddressReason(address) !== null;
}

/** Dotted-quad IPv4 (`127.0.0.1`), the only spelling DNS answers and URL parsers hand over. */
export function ipv4Bytes(address: string): Uint8Array | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  if (!m) return null;
  const bytes = m.slice(1).map(Number);
  return bytes.every((b) => b <= 255) ? Uint8Array.from(bytes) : null;
}

const IPV4_REFUSED: [number[], number][] = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 3], // multicast, reserved, broadcast
].map(([net, bits]) => [(net as string).split('.').map(Number), bits as number]);

function ipv4Reason(bytes: Uint8Array): string | null {
  return IPV4_REFUSED.some(([net, bits]) => hasPrefix(bytes, net, bits))
    ? `${bytes.join('.')} is loopback, private or reserved`
    : null;
}

function embeddedIpv4(bytes: Uint8Array, at: number): Uint8Array {
  return bytes.subarray(at, at + 4);
}

/** Prefixes refused outright, as [first bytes, prefix length in bits]. */
const IPV6_REFUSED: [number[], number, string][] = [
  [[0xfe, 0x80], 10, 'link-local'],
  [[0xfe, 0xc0], 10, 'site-local'],
  [[0xfc], 7, 'unique local (private)'],
  [[0xff], 8, 'multicast'],
  [[0x01, 0x00, 0, 0, 0, 0, 0, 0], 64, 'discard-only'],
  [[0x20, 0x01, 0x0d, 0xb8], 32, 'documentation'],
  [[0x20, 0x01, 0, 0], 32, 'Teredo, whose embedded address cannot be checked'],
  [[0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48, 'local-use NAT64'],
];

function hasPrefix(bytes: Uint8Array, prefix: number[], bits: number): boolean {
  for (let bit = 0; bit < bits; bit += 8) {
    const i = bit / 8;
    const mask = bits - bit >= 8 ? 0xff : (0xff << (8 - (bits - bit))) & 0xff;
    if ((bytes[i] & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

function ipv6Reason(bytes: Uint8Array): string | null {
  const zeros = (from: number, to: number) => bytes.subarray(from, to).every((b) => b === 0);
  // ::/96 holds ::, ::1 and the deprecated IPv4-compatible form (::7f00:1 is 127.0.0.1): never a git host.
  if (zeros(0, 12)) return 'unspecified, loopback or IPv4-compatible (::/96)';
  // ::ffff:0:0/96 IPv4-mapped and ::ffff:0:0:0/96 IPv4-translated.
  const ffff = bytes[10] === 0xff && bytes[11] === 0xff;
  if (zeros(0, 10) && ffff) return ipv4Reason(embeddedIpv4(bytes, 12)) && 'an IPv4-mapped private address';
  if (zeros(0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && zeros(10, 12))
    return ipv4Reason(embeddedIpv4(bytes, 12)) && 'an IPv4-translated private address';
  // NAT64 (RFC 6052 well-known prefix) reaches the IPv4 address it embeds: public ones are fine.
  if (hasPrefix(bytes, [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0], 96))
    return ipv4Reason(embeddedIpv4(bytes, 12)) && 'a NAT64 address of a private IPv4 address';
  // 6to4 carries its relay's IPv4 address in bits 16-47.
  if (hasPrefix(bytes, [0x20, 0x02], 16))
    return ipv4Reason(embeddedIpv4(bytes, 2)) && 'a 6to4 address of a private IPv4 address';
  for (const [prefix, bits, what] of IPV6_REFUSED) if (hasPrefix(bytes, prefix, bits)) return what;
  return null;
}

/** The 16 bytes of an IPv6 address in any spelling (`::`, a dotted IPv4 tail, a `%zone`). */
export function ipv6Bytes(address: string): Uint8Array | null {
  let text = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const parts = dotted[1].split('.').map(Number);
    if (parts.some((p) => p > 255)) return null;
    text = `${text.slice(0, dotted.index)}${((parts[0] << 8) | parts[1]).toString(16)}:${((parts[2] << 8) | parts[3]).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  const bytes = new Uint8Array(16);
  for (const [i, group] of groups.entries()) {
    if (!/^[0-9a-f]{1,4}$/i.test(group)) return null;
    const n = Number.parseInt(group, 16);
    bytes[i * 2] = n >> 8;
    bytes[i * 2 + 1] = n & 0xff;
  }
  return bytes;
}
