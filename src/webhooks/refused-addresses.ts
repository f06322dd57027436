import { BlockList } from 'node:net';

/**
 * Where no webhook goes unless the allow list admits it: everything that is not the public
 * internet (IANA's special-purpose registries). An IPv6 address that embeds an IPv4 address is
 * judged by that address too (embedded-ipv4.ts); of those forms, IPv4-mapped and NAT64's well-known
 * prefix are routes to the IPv4 internet (a dual-stack socket, DNS64), so they count as the address
 * they carry, and the others are refused whole as well (deprecated, or not on the public internet).
 * Cloud metadata services sit in ranges below (169.254.169.254, fd00:ec2::254); their names are
 * refused by name as well, before any lookup.
 */
const IPV4: [string, number][] = [
  ['0.0.0.0', 8], // "this network", 0.0.0.0 (unspecified)
  ['10.0.0.0', 8], // RFC 1918
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12], // RFC 1918
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // RFC 1918
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];
const IPV6: [string, number][] = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['::', 96], // IPv4-compatible (deprecated, RFC 4291)
  ['::ffff:0:0:0', 96], // IPv4-translated (RFC 2765), inside a translator only
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215)
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments (Teredo, 2001::/32, among them)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 (deprecated, RFC 7526)
  ['fc00::', 7], // unique local (fd00:ec2::254, AWS metadata)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

export function refusedAddresses(): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of IPV4) list.addSubnet(network, prefix, 'ipv4');
  for (const [network, prefix] of IPV6) list.addSubnet(network, prefix, 'ipv6');
  return list;
}

/** Names that are internal whatever DNS says (compared without a trailing dot). */
export const REFUSED_NAMES = [
  'localhost',
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
];
/** Suffixes of internal names. */
export const REFUSED_SUFFIXES = ['.localhost', '.internal', '.local'];
