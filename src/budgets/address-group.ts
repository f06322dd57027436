import { isIPv4, isIPv6 } from 'node:net';

/** Prefix lengths anonymous callers are grouped by (FAIR_SHARE_ANONYMOUS_IPV4_PREFIX, …_IPV6_PREFIX). */
export interface AddressPrefixes {
  ipv4: number;
  ipv6: number;
}

/**
 * The network an anonymous caller's budget is keyed by: an IPv4 address (or an IPv4-mapped IPv6 one,
 * as a dual-stack socket reports IPv4 peers) masked to `ipv4` bits, an IPv6 address to `ipv6` bits
 * (a /64 is what one subscriber is given: anyone holding one can rotate through 2^64 addresses), in
 * CIDR form. Anything else (no address) is kept as it is. Written out here: node:net tells an
 * address's family but has no bytes of it, and the arithmetic is a few lines.
 */
export function addressGroup(address: string, prefixes: AddressPrefixes): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const v4 = mapped ?? address;
  if (isIPv4(v4)) {
    const masked = maskBits(v4.split('.').map(Number), 8, prefixes.ipv4);
    return `${masked.join('.')}/${prefixes.ipv4}`;
  }
  const plain = address.split('%')[0]!;
  if (!isIPv6(plain)) return address;
  const masked = maskBits(ipv6Groups(plain), 16, prefixes.ipv6);
  return `${masked.map((group) => group.toString(16)).join(':')}/${prefixes.ipv6}`;
}

/** Keeps the first `prefix` bits of parts of `width` bits each. */
function maskBits(parts: number[], width: number, prefix: number): number[] {
  return parts.map((part, i) => {
    const keep = Math.min(width, Math.max(0, prefix - i * width));
    return keep === 0 ? 0 : part & (((1 << keep) - 1) << (width - keep));
  });
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail as two groups). */
function ipv6Groups(address: string): number[] {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  let text = address;
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${address.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const front = parse(head);
  const back = parse(tail);
  return tail === undefined ? front : [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
}
