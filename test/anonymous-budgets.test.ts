import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { addressGroup } from '../src/budgets/address-group.js';
import { eventually, startCluster, type Cluster } from './support/harness.js';

describe('anonymous callers are grouped by network', () => {
  const defaults = { ipv4: 32, ipv6: 64 };
  it('IPv6 by /64: addresses in one /64 share a key, the next /64 has its own', () => {
    const group = (address: string) => addressGroup(address, defaults);
    expect(group('2001:db8:aa:1::1')).toBe(group('2001:db8:aa:1:ffff:ffff:ffff:fffe'));
    expect(group('2001:db8:aa:1::1')).toBe(group('2001:DB8:AA:1:0:0:0:77'));
    expect(group('2001:db8:aa:1::1')).toBe(group('2001:db8:aa:1::5%eth0'));
    expect(group('2001:db8:aa:1::1')).not.toBe(group('2001:db8:aa:2::1'));
    expect(group('2001:db8:aa:1::1')).toBe('2001:db8:aa:1:0:0:0:0/64');
    expect(group('::1')).toBe('0:0:0:0:0:0:0:0/64');
  });

  it('IPv4 by address, IPv4-mapped IPv6 as IPv4, and the prefix lengths as configured', () => {
    expect(addressGroup('127.0.0.2', defaults)).toBe('127.0.0.2/32');
    expect(addressGroup('::ffff:127.0.0.2', defaults)).toBe('127.0.0.2/32');
    expect(addressGroup('10.1.2.3', { ipv4: 24, ipv6: 64 })).toBe(addressGroup('::ffff:10.1.2.200', { ipv4: 24, ipv6: 64 }));
    expect(addressGroup('10.1.2.3', { ipv4: 24, ipv6: 64 })).toBe('10.1.2.0/24');
    expect(addressGroup('2001:db8:aa:1::1', { ipv4: 32, ipv6: 48 })).toBe(addressGroup('2001:db8:aa:ff::1', { ipv4: 32, ipv6: 48 }));
    expect(addressGroup('2001:db8:aa:1::1', { ipv4: 32, ipv6: 56 })).not.toBe(addressGroup('2001:db8:aa:100::1', { ipv4: 32, ipv6: 56 }));
    expect(addressGroup('64:ff9b::1.2.3.4', { ipv4: 32, ipv6: 128 })).toBe('64:ff9b:0:0:0:0:102:304/128');
    expect(addressGroup('unknown', defaults)).toBe('unknown');
  });
});

/**
 * A bucket of 20 points refilled at 1 a second, and a request that costs the whole bucket (20
 * aliases of a 1-point field): after one, the bucket's owner is refused for 20 s, a margin no
 * loaded machine's next request comes near (a 1-point request would race a 1 s refill).
 */
const GROUPING = { FAIR_SHARE_ANONYMOUS_CAPACITY: '20', FAIR_SHARE_ANONYMOUS_RATE: '1', FAIR_SHARE_INSTANCES: '1' };
const WHOLE_BUCKET = `{ ${Array.from({ length: 20 }, (_, i) => `a${i}: rateLimit { remaining }`).join(' ')} }`;
/** A bucket of 5 points refilled at 1 a second: forgotten 10 s after its last use (2 × capacity / rate). */
const FORGETFUL = { FAIR_SHARE_ANONYMOUS_CAPACITY: '5', FAIR_SHARE_ANONYMOUS_RATE: '1', FAIR_SHARE_INSTANCES: '1' };

let cluster: Cluster;
let perAddress: App;
let perNetwork: App;
let forgetful: App;
beforeAll(async () => {
  cluster = await startCluster([]);
  [perAddress, perNetwork, forgetful] = await Promise.all([
    cluster.startInstance(GROUPING),
    cluster.startInstance({ ...GROUPING, FAIR_SHARE_ANONYMOUS_IPV4_PREFIX: '24' }),
    cluster.startInstance(FORGETFUL),
  ]);
});
afterAll(async () => {
  await Promise.all([perAddress?.stop(), perNetwork?.stop(), forgetful?.stop()]);
  await cluster?.stop();
});

/** An anonymous request from `localAddress` (loopback answers from any 127/8 address): its status. */
function ask(app: App, localAddress: string, query = '{ rateLimit { remaining } }'): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ query });
    const request = http.request(
      app.url,
      { method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode!));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

describe('anonymous budgets over HTTP', () => {
  it('IPv4: each address its own bucket by default; one /24 one bucket with FAIR_SHARE_ANONYMOUS_IPV4_PREFIX=24', async () => {
    expect(await ask(perAddress, '127.0.1.2', WHOLE_BUCKET)).toBe(200);
    expect(await ask(perAddress, '127.0.1.2', WHOLE_BUCKET)).toBe(429);
    expect(await ask(perAddress, '127.0.1.3', WHOLE_BUCKET)).toBe(200);
    expect(await ask(perNetwork, '127.0.2.2', WHOLE_BUCKET)).toBe(200);
    expect(await ask(perNetwork, '127.0.2.3', WHOLE_BUCKET)).toBe(429);
    expect(await ask(perNetwork, '127.0.3.3', WHOLE_BUCKET)).toBe(200);
  });

  it('forgets an anonymous bucket once it has refilled, in seconds, not days', async () => {
    const rows = async () =>
      (await cluster.db.query("SELECT key FROM fair_share_bucket WHERE key LIKE 'anonymous:127.0.4.%'")).rows.map(
        (row) => row.key as string,
      );
    expect(await ask(forgetful, '127.0.4.2')).toBe(200);
    await eventually(async () => (await rows()).length === 1);
    expect(await rows()).toEqual(['anonymous:127.0.4.2/32']);
    // Idle leases go back after 5 s, the bucket may be forgotten 10 s later, and the sweep runs every 10 s.
    await eventually(async () => (await rows()).length === 0, 60_000);
  }, 90_000);
});
