import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT } from 'jose';
import { Authenticator } from '../../src/auth/authenticate.js';
import { createKeySource } from '../../src/auth/create-key-source.js';
import type { KeySource } from '../../src/auth/key-source.js';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/observability/logger.js';
import type { InProcessCase } from '../case.js';
import { inFreshProcess } from '../fresh-process.js';
import { num } from '../format.js';

const VS_PEM = '9. token verification, cached JWKS key vs static PEM key (RS256)';
const VS_SECRET = '9. token verification, cached JWKS key vs static secret (HS256)';
const ROUNDS = 5;
const CHUNK = 50;
const ISSUER = 'https://id.example/';
const AUDIENCE = 'community-layer';

/**
 * What verifying a bearer token costs per request when its key comes from a remote key set that is
 * already cached (no fetch), against the same verification with a configured key. Each request
 * carries a token never seen before, so the verified-token cache never answers; figures are medians
 * of the rounds, compared on CPU time. The details add what a remembered token costs.
 */
export const tokenVerificationInProcess: InProcessCase = {
  labels: [VS_PEM, VS_SECRET],
  async run(sizes) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwks = { keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'bench-key', alg: 'RS256', use: 'sig' }] };
    const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const secret = randomBytes(32).toString('base64url');
    const common = { NODE_ENV: 'test', AUTH_JWT_ISSUER: ISSUER, AUTH_JWT_AUDIENCE: AUDIENCE };
    const logger = createLogger({ env: 'test', logLevel: 'silent' });
    const auth = loadConfig(common).auth;
    const remote = createKeySource(
      { ...auth, key: { kind: 'jwks', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks` } },
      logger,
    );
    try {
      remote.start();
      while (!remote.loaded) await new Promise((resolve) => setTimeout(resolve, 5));
      const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
      const arms = {
        jwks: {
          keys: remote,
          tokens: await tokens(sizes.verifications, (jwt) => jwt.setProtectedHeader({ alg: 'RS256', kid: 'bench-key' }).sign(privateKey)),
        },
        pem: {
          keys: createKeySource({ ...auth, key: { kind: 'publicKey', pem } }, logger),
          tokens: await tokens(sizes.verifications, (jwt) => jwt.setProtectedHeader({ alg: 'RS256' }).sign(privateKey)),
        },
        secret: {
          keys: createKeySource({ ...auth, key: { kind: 'secret', secret } }, logger),
          tokens: await tokens(sizes.verifications, (jwt) => jwt.setProtectedHeader({ alg: 'HS256' }).sign(Buffer.from(secret))),
        },
      };
      const rules = auth;
      const names = Object.keys(arms) as (keyof typeof arms)[];
      const byRound = Object.fromEntries(names.map((name) => [name, { cpuUs: [] as number[], wallUs: [] as number[] }])) as Record<
        keyof typeof arms,
        { cpuUs: number[]; wallUs: number[] }
      >;
      // One untimed round (JIT, key import), then timed ones.
      for (let round = -1; round < ROUNDS; round++) {
        const authenticators = names.map((name) => new Authenticator(arms[name].keys, rules));
        const totals = names.map(() => ({ cpuUs: 0, wallUs: 0 }));
        // Small chunks, arms taking turns in a rotating order: a burst of other work on this shared
        // machine falls on every arm alike.
        for (let start = 0, turn = 0; start < sizes.verifications; start += CHUNK, turn++) {
          for (let k = 0; k < names.length; k++) {
            const i = (k + turn) % names.length;
            const cost = await costOf(authenticators[i]!, arms[names[i]!].tokens.slice(start, start + CHUNK));
            totals[i]!.cpuUs += cost.cpuUs;
            totals[i]!.wallUs += cost.wallUs;
          }
        }
        if (round < 0) continue;
        names.forEach((name, i) => {
          byRound[name].cpuUs.push(totals[i]!.cpuUs / sizes.verifications);
          byRound[name].wallUs.push(totals[i]!.wallUs / sizes.verifications);
        });
      }
      const cpu = (name: keyof typeof arms) => median(byRound[name].cpuUs);
      const wall = (name: keyof typeof arms) => median(byRound[name].wallUs);
      const rememberedUs = await rememberedMicros(arms.jwks.keys, rules, arms.jwks.tokens[0]!, sizes.verifications);
      const details = {
        verificationsPerRound: sizes.verifications,
        rounds: ROUNDS,
        microsByRound: byRound,
        rememberedTokenWallMicros: rememberedUs,
      };
      const figure = `${num(cpu('jwks'), 1)} µs CPU per new token (wall ${num(wall('jwks'), 1)} µs; a remembered token ${num(rememberedUs, 1)} µs)`;
      const versus = (name: 'pem' | 'secret', label: string) => `${label} ${num(cpu(name), 1)} µs CPU (wall ${num(wall(name), 1)} µs)`;
      return [
        {
          case: VS_PEM,
          figure,
          ceiling: versus('pem', 'static PEM'),
          ratio: cpu('jwks') / cpu('pem'),
          target: '≤ 1.10',
          met: cpu('jwks') / cpu('pem') <= 1.1,
          details,
        },
        {
          case: VS_SECRET,
          figure,
          ceiling: versus('secret', 'static HS256'),
          ratio: cpu('jwks') / cpu('secret'),
          target: '—',
          met: null,
          details,
        },
      ];
    } finally {
      remote.stop();
      server.close();
    }
  },
};

/** In a process of its own: a heap and libuv pool left busy by earlier cases skew the arms unevenly. */
export const tokenVerification = inFreshProcess(tokenVerificationInProcess, new URL(import.meta.url), 'tokenVerificationInProcess');

async function tokens(count: number, sign: (jwt: SignJWT) => Promise<string>): Promise<string[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      sign(
        new SignJWT({ sub: String(1_000 + i), scope: 'signals:write' })
          .setIssuer(ISSUER)
          .setAudience(AUDIENCE)
          .setIssuedAt()
          .setExpirationTime('2h'),
      ),
    ),
  );
}

/**
 * CPU (every thread of this process: WebCrypto verifies on the libuv pool) and wall time to verify
 * `jwts`, each new to this Authenticator, one request after the other, each answer checked. CPU
 * time is the cost; wall time also holds waits for a core on this shared machine.
 */
async function costOf(authenticator: Authenticator, jwts: readonly string[]): Promise<{ cpuUs: number; wallUs: number }> {
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  for (const jwt of jwts) {
    const { viewer, problem } = await authenticator.authenticate(`Bearer ${jwt}`);
    if (!viewer) throw new Error(`a bench token was refused: ${problem}`);
  }
  const wallUs = Number(process.hrtime.bigint() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  return { cpuUs: cpu.user + cpu.system, wallUs };
}

/** A token the Authenticator verified before: what most requests of a client reusing its token cost. */
async function rememberedMicros(
  keys: KeySource,
  rules: ConstructorParameters<typeof Authenticator>[1],
  jwt: string,
  count: number,
): Promise<number> {
  const authenticator = new Authenticator(keys, rules);
  await authenticator.authenticate(`Bearer ${jwt}`);
  const started = process.hrtime.bigint();
  for (let i = 0; i < count; i++) await authenticator.authenticate(`Bearer ${jwt}`);
  return Number(process.hrtime.bigint() - started) / 1000 / count;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
