/**
 * A small static file server for tests and benchmarks: the shared fixtures
 * (the tiny GGUF) read in place, never copied into the project. Every response
 * allows cross-origin reads (CORS and CORP), so a cross-origin isolated page
 * (COEP require-corp) may fetch from it. Run directly, it serves the fixtures
 * on `--port N` (or E2E_FIXTURES_PORT, default 4391).
 */
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const FIXTURES_DIR = fileURLToPath(new URL('../../../shared/fixtures/', import.meta.url));
export const DEFAULT_FIXTURES_PORT = 4391;

// As a static host types what a build emits: browsers refuse a stylesheet or a manifest served as octet-stream.
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
  '.gguf': 'application/octet-stream',
};

export interface ServeOptions {
  port: number;
  /** URL prefix → folder, e.g. { '/': FIXTURES_DIR }. */
  roots: Record<string, string>;
  /** Fixed pages by path, e.g. a benchmark page. */
  pages?: Record<string, string>;
  /** Send COOP/COEP too, making the pages served here cross-origin isolated. */
  isolate?: boolean;
}

export function serveFiles(options: ServeOptions): Promise<{ url: string; close(): Promise<void> }> {
  const prefixes = Object.keys(options.roots).sort((a, b) => b.length - a.length);
  const server: Server = createServer((req, res) => {
    const headers: Record<string, string> = {
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Expose-Headers': 'Content-Length, ETag',
      'Cross-Origin-Resource-Policy': 'cross-origin',
      'Cache-Control': 'no-store',
    };
    if (options.isolate) {
      headers['Cross-Origin-Opener-Policy'] = 'same-origin';
      headers['Cross-Origin-Embedder-Policy'] = 'require-corp';
    }
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { ...headers, 'Access-Control-Allow-Methods': 'GET, HEAD', 'Access-Control-Allow-Headers': '*' });
      return res.end();
    }
    const page = options.pages?.[path];
    if (page !== undefined) {
      res.writeHead(200, { ...headers, 'Content-Type': TYPES['.html']! });
      return res.end(req.method === 'HEAD' ? undefined : page);
    }
    const prefix = prefixes.find((p) => path.startsWith(p));
    const root = prefix === undefined ? undefined : resolve(options.roots[prefix]!);
    const file = root && normalize(join(root, path.slice(prefix!.length)));
    // Only files inside a served folder.
    if (!root || !file || !(file === root || file.startsWith(root + sep)) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, headers);
      return res.end();
    }
    const size = statSync(file).size;
    const type = TYPES[extname(file)] ?? 'application/octet-stream';
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    if (range) {
      const start = Number(range[1]);
      const end = range[2] ? Math.min(Number(range[2]), size - 1) : size - 1;
      res.writeHead(206, { ...headers, 'Content-Type': type, 'Content-Length': String(end - start + 1), 'Content-Range': `bytes ${start}-${end}/${size}` });
      if (req.method === 'HEAD') return res.end();
      return void createReadStream(file, { start, end }).pipe(res);
    }
    res.writeHead(200, { ...headers, 'Content-Type': type, 'Content-Length': String(size), 'Accept-Ranges': 'bytes' });
    if (req.method === 'HEAD') return res.end();
    createReadStream(file).pipe(res);
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(options.port, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : options.port;
      ok({ url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((done) => server.close(() => done())) });
    });
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const flag = process.argv.indexOf('--port');
  const port = Number(flag > 0 ? process.argv[flag + 1] : (process.env.E2E_FIXTURES_PORT ?? DEFAULT_FIXTURES_PORT));
  const { url } = await serveFiles({ port, roots: { '/': FIXTURES_DIR } });
  console.log(`Serving ${FIXTURES_DIR} at ${url}`);
}
