/**
 * Text storage layouts in Chromium (a profile on disk, as a person's browser
 * keeps it): one value per book (the layout before parts, the baseline) against
 * parts of bounded size, kept as strings or as UTF-8 bytes. Prints write, read
 * and range-read times and the bytes on disk, for a 15 MB book and a ~100 MB one.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from '@playwright/test';
import { build } from 'vite';
import { CJK } from '../test/fixtures/documents';
import type { LayoutResult } from './browser/text-layout';

const OUT = 'dist-bench-layout';

export async function textLayoutBench(sizes = [1 << 18, 1 << 20, 1 << 22]): Promise<void> {
  await build({
    configFile: false,
    logLevel: 'error',
    build: { outDir: OUT, emptyOutDir: true, lib: { entry: 'bench/browser/text-layout.ts', formats: ['es'], fileName: 'text-layout' } },
  });
  const book = readFileSync(new URL('../../shared/corpus/frankenstein.txt', import.meta.url), 'utf8')
    .replace(/^\uFEFF/, '')
    .replace(/\r\n?/g, '\n');
  let text = '';
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    try {
      const body = path === '/' ? '<!doctype html><title>bench</title>' : path === '/text.txt' ? text : readFileSync(`${OUT}${path}`);
      res.writeHead(200, { 'content-type': path.endsWith('.js') ? 'text/javascript' : path === '/' ? 'text/html' : 'text/plain; charset=utf-8' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const executablePath = ['/usr/lib/chromium/chromium', '/usr/bin/chromium'].find((p) => existsSync(p));
  const profile = mkdtempSync(join(tmpdir(), 'memagent-layout-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath, args: ['--disable-background-networking'] });
  try {
    const entry = readdirSync(OUT).find((f) => f.startsWith('text-layout') && f.endsWith('.js'));
    const chinese = `${CJK.simplified}\n\n`;
    const texts: [string, string][] = [
      ['Frankenstein x34', book.repeat(34)],
      ['Frankenstein x230', book.repeat(230)],
      ['Chinese', chinese.repeat(Math.ceil(5e6 / chinese.length))],
    ];
    for (const [label, body] of texts) {
      text = body;
      const page = await context.newPage();
      await page.goto(`http://127.0.0.1:${port}/`);
      const results = await page.evaluate(
        async ([src, sizes]) => {
          const mod = await import(src as string);
          return (await mod.run('/text.txt', sizes)) as LayoutResult[];
        },
        [`/${entry}`, sizes] as const,
      );
      await page.close();
      const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
      console.log(`Text storage in Chromium: ${label} (${(text.length / 1e6).toFixed(1)}M characters, ${mb(Buffer.byteLength(text))} as UTF-8)`);
      for (const r of results) {
        const name =
          `${r.layout === 'one value' ? 'baseline' : 'parts   '}  ${r.layout.padEnd(9)} ${r.layout === 'one value' ? '' : `${(r.partChars / 1024).toFixed(0)}K chars`.padEnd(10)}`.padEnd(
            32,
          );
        if (r.error) {
          console.log(`  ${name}fails: ${r.error}`);
          continue;
        }
        console.log(
          `  ${name}write ${r.writeMs.toFixed(0).padStart(5)} ms (first part with the record ${r.firstMs.toFixed(0).padStart(4)} ms)  ` +
            `read all ${r.readAllMs.toFixed(0).padStart(5)} ms  one chunk ${r.readRangeMs.toFixed(1).padStart(6)} ms  disk ${mb(r.diskBytes)}`,
        );
      }
    }
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
    server.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await textLayoutBench();
