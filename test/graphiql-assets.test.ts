import { createHash } from 'node:crypto';
import http from 'node:http';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { type Cluster, useCluster } from './support/harness.js';

let app: App;
useCluster(
  [{}],
  (cluster) =>
    ({
      apps: [app],
    } = cluster as Cluster & { apps: [App] }),
);

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The bytes as they crossed the wire (still compressed). */
  wire: Buffer;
}

/** A GET whose body is kept as sent, so its size on the wire and its encoding can be checked. */
function get(path: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    http
      .get(new URL(path, app.url), { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, wire: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

const decoded = (raw: Raw) =>
  raw.headers['content-encoding'] === 'br'
    ? zlib.brotliDecompressSync(raw.wire)
    : raw.headers['content-encoding'] === 'gzip'
      ? zlib.gunzipSync(raw.wire)
      : raw.wire;

describe('GraphiQL served like static assets', () => {
  it('is a small page linking content-hashed, immutable, compressed files: under 2 MB on the wire in all', async () => {
    const page = await get('/graphql', { accept: 'text/html' });
    expect(page.status).toBe(200);
    const html = page.wire.toString('utf8');
    expect(page.wire.length).toBeLessThan(32 * 1024);
    const linked = [...html.matchAll(/(?:href|src)="(\/graphiql\/assets\/[^"]+)"/g)].map((match) => match[1]!);
    const workers = Object.values(JSON.parse(/const workers = (\{[^}]+\})/.exec(html)![1]!) as Record<string, string>);
    expect(linked).toHaveLength(3); // icon, stylesheet, script
    expect(workers).toHaveLength(3);

    let wire = page.wire.length;
    const fetched = new Map<string, Raw>();
    for (const path of [...linked, ...workers]) {
      const asset = await get(path, { 'accept-encoding': 'gzip, deflate, br' });
      fetched.set(path, asset);
      expect(asset.status).toBe(200);
      expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(asset.headers['content-encoding']).toBe('br');
      expect(Number(asset.headers['content-length'])).toBe(asset.wire.length);
      // Named by what it holds: a new bundle gets new names, so "immutable" is safe.
      const hash = /\.([0-9a-f]{16})\.\w+$/.exec(path)![1];
      expect(createHash('sha256').update(decoded(asset)).digest('hex').slice(0, 16)).toBe(hash);
      wire += asset.wire.length;
    }
    // The stylesheet's fonts are files of their own; a browser fetches the woff2 ones it uses.
    const css = decoded([...fetched].find(([path]) => path.endsWith('.css'))![1]).toString('utf8');
    expect(css).not.toContain('data:font');
    const fonts = [...new Set([...css.matchAll(/url\("(\/graphiql\/assets\/[^"]+\.woff2)"\)/g)].map((match) => match[1]!))];
    expect(fonts.length).toBeGreaterThan(0);
    for (const path of fonts) {
      const font = await get(path, { 'accept-encoding': 'br' });
      expect(font.headers['content-type']).toBe('font/woff2');
      expect(font.headers['content-encoding']).toBeUndefined();
      wire += font.wire.length;
    }
    expect(wire).toBeLessThan(2 * 1024 * 1024);
  }, 120_000);

  it('serves the same bytes uncompressed or gzip-compressed to clients without brotli', async () => {
    const html = (await get('/graphql', { accept: 'text/html' })).wire.toString('utf8');
    const script = /src="(\/graphiql\/assets\/graphiql\.[^"]+\.js)"/.exec(html)![1]!;
    const [plain, gzipped] = await Promise.all([get(script), get(script, { 'accept-encoding': 'gzip' })]);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(decoded(gzipped).equals(plain.wire)).toBe(true);
    expect((await get('/graphiql/assets/graphiql.0000000000000000.js')).status).toBe(404);
  }, 120_000);
});
