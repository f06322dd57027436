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

/** A bucket of 5 points refilled at 1 a second: forgotten 10 s after its last use (2 × capacity / rate). */
const BUDGETS = { FAIR_SHARE_ANONYMOUS_CAPACITY: '5', FAIR_SHARE_ANONYMOUS_RATE: '1', FAIR_SHARE_INSTANCES: '1' };

let cluster: Cluster;
let perAddress: App;
let perNetwork: App;
beforeAll(async () => {
  cluster = await startCluster([]);
  [perAddress, perNetwork] = await Promise.all([
    cluster.startInstance(BUDGETS),
    cluster.startInstance({ ...BUDGETS, FAIR_SHARE_ANONYMOUS_IPV4_PREFIX: '24' }),
  ]);
});
afterAll(async () => {
  await Promise.all([perAddress?.stop(), perNetwork?.stop()]);
  await cluster?.stop();
});

/** An anonymous request from `localAddress` (loopback answers from any 127/8 address): its status. */
function ask(app: App, localAddress: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ query: '{ rateLimit { remaining } }' });
    const request = http.request(app.url, { method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode!));
    });
    request.on('error', reject);
    request.end(body);
  });
}

async function spend(app: App, localAddress: string): Promise<void> {
  let status = 200;
  for (let i = 0; i < 30 && status === 200; i++) status = await ask(app, localAddress);
  expect(status).toBe(429);
}

describe('anonymous budgets over HTTP', () => {
  it('IPv4: each address its own bucket by default; one /24 one bucket with FAIR_SHARE_ANONYMOUS_IPV4_PREFIX=24', async () => {
    await spend(perAddress, '127.0.1.2');
    expect(await ask(perAddress, '127.0.1.3')).toBe(200);
    await spend(perNetwork, '127.0.2.2');
    expect(await ask(perNetwork, '127.0.2.3')).toBe(429);
    expect(await ask(perNetwork, '127.0.3.3')).toBe(200);
  });

  it('forgets an anonymous bucket once it has refilled, in seconds, not days', async () => {
    const rows = async () => (await cluster.db.query("SELECT key FROM fair_share_bucket WHERE key LIKE 'anonymous:127.0.4.%'")).rows.map((row) => row.key as string);
    expect(await ask(perAddress, '127.0.4.2')).toBe(200);
    await eventually(async () => (await rows()).length === 1);
    expect(await rows()).toEqual(['anonymous:127.0.4.2/32']);
    // Idle leases go back after 5 s, the bucket may be forgotten 10 s later, and the sweep runs every 10 s.
    await eventually(async () => (await rows()).length === 0, 60_000);
  }, 90_000);
});
