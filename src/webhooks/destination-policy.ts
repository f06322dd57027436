import { lookup as resolve, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { embeddedIpv4 } from './embedded-ipv4.js';
import { REFUSED_NAMES, REFUSED_SUFFIXES, refusedAddresses } from './refused-addresses.js';

/** The longest webhook URL registered (a common limit of browsers, CDNs and webhook senders). */
export const URL_MAX_LENGTH = 2048;

/** What an admin sees for a refused destination: never which internal address or port it was. */
export const ADDRESS_NOT_ALLOWED = 'address not allowed';

/** A destination outside the allowed network, refused before any connection is made. */
export class AddressNotAllowed extends Error {
  constructor() {
    super(ADDRESS_NOT_ALLOWED);
    this.name = 'AddressNotAllowed';
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * Where webhooks may go. Refused: internal addresses (refused-addresses.ts) unless the allow list
 * (CIDRs, addresses, host names: WEBHOOK_ALLOWED_DESTINATIONS) admits them, and URLs carrying user
 * info. A literal address is judged from the URL (WHATWG `URL` has already turned `2130706433`,
 * `0x7f000001` and `0177.0.0.1` into `127.0.0.1`); a name is judged at every connection by `lookup`,
 * which hands the socket only addresses it checked, so a name cannot resolve to another address
 * between the check and the connection (DNS rebinding).
 */
export class DestinationPolicy {
  private readonly refused = refusedAddresses();
  private readonly allowed = new BlockList();
  private readonly allowedNames = new Set<string>();

  constructor(allowList: readonly string[]) {
    for (const entry of allowList) {
      const [network, prefix] = entry.split('/');
      const family = isIP(network!);
      if (family === 0) this.allowedNames.add(hostName(entry));
      else
        this.allowed.addSubnet(network!, prefix === undefined ? (family === 4 ? 32 : 128) : Number(prefix), family === 4 ? 'ipv4' : 'ipv6');
    }
  }

  /** Why `url` is refused before any lookup; null when it may be tried (a name is checked again at each connection). */
  refusal(url: string): string | null {
    if (url.length > URL_MAX_LENGTH) return `url must be at most ${URL_MAX_LENGTH} characters (it has ${url.length})`;
    if (!/^https?:\/\/[^\s]+$/i.test(url) || !URL.canParse(url)) return 'url must be an http(s) URL';
    const parsed = new URL(url);
    if (parsed.username !== '' || parsed.password !== '') return 'url must not carry user info (user:password@)';
    const host = hostName(parsed.hostname);
    if (this.allowedNames.has(host)) return null;
    if (isIP(host) !== 0) return this.admits(host) ? null : ADDRESS_NOT_ALLOWED;
    if (REFUSED_NAMES.includes(host) || REFUSED_SUFFIXES.some((suffix) => host.endsWith(suffix))) return ADDRESS_NOT_ALLOWED;
    return null;
  }

  /**
   * An IPv6 address embedding IPv4 addresses is judged by them as well as by its own range: refused
   * if either is refused, unless the allow list names it or every address it embeds.
   */
  admits(address: string): boolean {
    if (isIP(address) !== 6) return !this.refused.check(address, 'ipv4') || this.allowed.check(address, 'ipv4');
    if (this.allowed.check(address, 'ipv6')) return true;
    const embedded = embeddedIpv4(address);
    if (embedded.length > 0 && embedded.every((ipv4) => this.allowed.check(ipv4, 'ipv4'))) return true;
    return !this.refused.check(address, 'ipv6') && embedded.every((ipv4) => !this.refused.check(ipv4, 'ipv4'));
  }

  /** A `lookup` for `http.request`: the name resolved, only admitted addresses passed on (all of them for an allowed name). */
  readonly lookup = (hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback): void => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const admitted = this.allowedNames.has(hostName(hostname)) ? addresses : addresses.filter(({ address }) => this.admits(address));
      if (admitted.length === 0) return callback(new AddressNotAllowed(), []);
      if (options.all) return callback(null, admitted);
      return callback(null, admitted[0]!.address, admitted[0]!.family);
    });
  };
}

/** A host as compared: lower case, without IPv6 brackets or a trailing dot. */
function hostName(host: string): string {
  return host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}
