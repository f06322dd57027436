/**
 * The IPv4 addresses an IPv6 address carries, in every form that embeds one: IPv4-compatible
 * (`::a.b.c.d`, deprecated), IPv4-mapped (`::ffff:a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`),
 * NAT64 (`64:ff9b::a.b.c.d`), 6to4 (`2002:AABB:CCDD::`) and Teredo (`2001:0:SSSS:SSSS::` + the
 * client's address inverted in the last 32 bits). Local-use NAT64 (`64:ff9b:1::/48`) places the
 * address where its operator's prefix length says, so it is refused whole (refused-addresses.ts).
 * Parsing is the WHATWG URL parser's (it serializes an IPv6 host as eight hex pieces, compressed);
 * Node's `net.BlockList` only relates IPv4-mapped addresses to IPv4 rules, so the rest is here.
 */
export function embeddedIpv4(address: string): string[] {
  const h = hextets(address);
  if (h === null) return [];
  const zero = (from: number, to: number) => h.slice(from, to).every((piece) => piece === 0);
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  if (zero(0, 6) && !(h[6] === 0 && h[7]! <= 1)) return [v4(h[6]!, h[7]!)]; // compatible; not :: or ::1
  if (zero(0, 5) && h[5] === 0xffff) return [v4(h[6]!, h[7]!)]; // mapped
  if (zero(0, 4) && h[4] === 0xffff && h[5] === 0) return [v4(h[6]!, h[7]!)]; // translated
  if (h[0] === 0x64 && h[1] === 0xff9b && zero(2, 6)) return [v4(h[6]!, h[7]!)]; // NAT64, well-known prefix
  if (h[0] === 0x2002) return [v4(h[1]!, h[2]!)]; // 6to4
  if (h[0] === 0x2001 && h[1] === 0) return [v4(h[2]!, h[3]!), v4(h[6]! ^ 0xffff, h[7]! ^ 0xffff)]; // Teredo: server, client
  return [];
}

/** The eight 16-bit pieces of an IPv6 address; null when it is not one (a zone index, say). */
function hextets(address: string): number[] | null {
  let host: string;
  try {
    host = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const pieces = (part: string | undefined) => (part ? part.split(':').map((piece) => parseInt(piece, 16)) : []);
  const [head, tail] = host.split('::');
  if (tail === undefined) return pieces(head);
  const left = pieces(head);
  const right = pieces(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}
