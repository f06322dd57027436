import { createHash } from 'node:crypto';
import type http from 'node:http';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import * as bundle from '@graphql-yoga/render-graphiql/graphiql';

export const GRAPHIQL_ASSETS_PATH = '/graphiql/assets/';

/** Where the page finds its parts, by content-hashed path. */
export interface GraphiQLUrls {
  js: string;
  css: string;
  favicon: string;
  workers: { editorWorkerService: string; json: string; graphql: string };
}

interface Asset {
  type: string;
  body: Buffer;
  /** Compressed on the first request for each encoding, once; null: already compact (woff2, png). */
  encoded: Map<Encoding, Promise<Buffer>> | null;
}

type Encoding = 'br' | 'gzip';
const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);
const COMPACT = new Set(['font/woff2', 'font/woff', 'image/png']);
const DATA_URL = /url\((["']?)data:([\w/+.-]+);base64,([A-Za-z0-9+/=]+)\1\)/g;
const EXTENSIONS: Record<string, string> = {
  'font/woff2': 'woff2',
  'font/woff': 'woff',
  'font/ttf': 'ttf',
  'image/svg+xml': 'svg',
  'image/png': 'png',
  'image/x-icon': 'ico',
};

/**
 * GraphiQL's bundle (@graphql-yoga/render-graphiql inlines ~9 MB into one page) as separate files:
 * the script, the stylesheet with its inline fonts taken out into files of their own (a browser
 * then fetches only the one format it uses, as binary rather than base64), the three editor
 * workers and the icon. Each is named by its content hash and cacheable for good; text is served
 * brotli- or gzip-compressed, in the thread pool the first time it is asked for.
 * Built on first use: an app that never serves GraphiQL pays nothing.
 */
export class GraphiQLAssets {
  private built: { urls: GraphiQLUrls; assets: Map<string, Asset> } | null = null;

  get urls(): GraphiQLUrls {
    return this.build().urls;
  }

  /** Serves `pathname` if it is one of the assets; false otherwise. */
  serve(pathname: string, req: http.IncomingMessage, res: http.ServerResponse): Promise<boolean> | boolean {
    if (!pathname.startsWith(GRAPHIQL_ASSETS_PATH)) return false;
    const asset = this.build().assets.get(pathname);
    if (!asset) return false;
    const headers = {
      'content-type': asset.type,
      'cache-control': 'public, max-age=31536000, immutable',
      vary: 'accept-encoding',
      'x-content-type-options': 'nosniff',
    };
    const accepted = String(req.headers['accept-encoding'] ?? '');
    const encoding: Encoding | null = !asset.encoded ? null : /\bbr\b/.test(accepted) ? 'br' : /\bgzip\b/.test(accepted) ? 'gzip' : null;
    if (!encoding || !asset.encoded) {
      res.writeHead(200, { ...headers, 'content-length': asset.body.length }).end(asset.body);
      return true;
    }
    const encoded = asset.encoded.get(encoding) ?? compress(asset.body, encoding);
    asset.encoded.set(encoding, encoded);
    return encoded.then((body) => {
      res.writeHead(200, { ...headers, 'content-encoding': encoding, 'content-length': body.length }).end(body);
      return true;
    });
  }

  private build(): { urls: GraphiQLUrls; assets: Map<string, Asset> } {
    if (this.built) return this.built;
    const assets = new Map<string, Asset>();
    const add = (name: string, extension: string, type: string, body: Buffer): string => {
      const path = `${GRAPHIQL_ASSETS_PATH}${name}.${createHash('sha256').update(body).digest('hex').slice(0, 16)}.${extension}`;
      assets.set(path, { type, body, encoded: COMPACT.has(type) ? null : new Map() });
      return path;
    };
    const css = bundle.css.replace(
      DATA_URL,
      (_match, _quote, type: string, data: string) =>
        `url("${add('inline', EXTENSIONS[type] ?? 'bin', type, Buffer.from(data, 'base64'))}")`,
    );
    const icon = /^data:([\w/+.-]+);base64,(.*)$/s.exec(bundle.favicon);
    const script = (name: string, source: string) => add(name, 'js', 'text/javascript; charset=utf-8', Buffer.from(source));
    const urls: GraphiQLUrls = {
      js: script('graphiql', bundle.js),
      css: add('graphiql', 'css', 'text/css; charset=utf-8', Buffer.from(css)),
      favicon: icon ? add('favicon', EXTENSIONS[icon[1]!] ?? 'bin', icon[1]!, Buffer.from(icon[2]!, 'base64')) : bundle.favicon,
      workers: {
        editorWorkerService: script('editor.worker', bundle.editorWorkerService),
        json: script('json.worker', bundle.jsonWorker),
        graphql: script('graphql.worker', bundle.graphqlWorker),
      },
    };
    return (this.built = { urls, assets });
  }
}

/**
 * Brotli at quality 9 with a 16 MB window: the script shrinks ~5× in about a second, in the thread
 * pool (quality 11 saves 10% more but takes a minute). gzip for the clients without brotli.
 */
function compress(body: Buffer, encoding: Encoding): Promise<Buffer> {
  if (encoding === 'gzip') return gzip(body, { level: 9 });
  return brotli(body, {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: 9,
      [zlib.constants.BROTLI_PARAM_LGWIN]: 24,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length,
    },
  });
}
