/**
 * Hostile and broken files against the ingest entry: random bytes, every
 * format cut short or with bytes overwritten, archives with damaged parts,
 * deeply nested HTML, EPUB and DOCX, and huge single lines. Each case must end,
 * within its own time bound, in a refusal with a message or in a valid
 * document. Cases are seeded, so a failure reproduces.
 *
 * Cases run one at a time in a worker thread: a case that never ends (a
 * backtracking regex, a quadratic loop) blocks that thread, not the test, and
 * the thread is replaced when the case's time is up.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { strToU8, unzipSync, zipSync, type Zippable } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../src/core/random';
import { bookPages, CJK, encode, makeDocx, makeEpub, makeHtml, makePdf, owned, prose, WESTERN } from './fixtures/documents';
import type { FuzzReply, FuzzRequest } from './fuzz-ingest.worker';

interface Case {
  label: string;
  name: string;
  bytes: Uint8Array<ArrayBuffer>;
  /** Most milliseconds the case may take (the worker is replaced after it). */
  limitMs?: number;
  maxUnzippedBytes?: number;
}

interface Result extends Case {
  outcome: FuzzReply['outcome'] | 'hung' | 'crashed';
  message: string;
  ms: number;
}

const DEFAULT_LIMIT_MS = 10_000;
const BIG_LIMIT_MS = 20_000;
const MB = 1024 * 1024;

// ---- deterministic randomness ----

/** A small seeded generator, so every run builds the same cases. */
const rng = seededRandom;

function randomBytes(length: number, seed: number): Uint8Array<ArrayBuffer> {
  const next = rng(seed);
  const out = new Uint8Array(new ArrayBuffer(length));
  for (let i = 0; i < length; i++) out[i] = Math.floor(next() * 256);
  return out;
}

const utf8 = (s: string) => owned(new TextEncoder().encode(s));
const concat = (...parts: Uint8Array[]) => owned(Buffer.concat(parts));

/** `count` bytes overwritten with random values at random places. */
function overwrite(bytes: Uint8Array, count: number, seed: number): Uint8Array<ArrayBuffer> {
  const next = rng(seed);
  const out = owned(bytes);
  for (let i = 0; i < count; i++) out[Math.floor(next() * out.length)] = Math.floor(next() * 256);
  return out;
}

/** An archive rebuilt with one entry changed. */
function withEntry(zip: Uint8Array, name: string, change: (data: Uint8Array) => Uint8Array): Uint8Array<ArrayBuffer> {
  const files = unzipSync(zip);
  const rebuilt: Zippable = {};
  for (const [n, data] of Object.entries(files)) rebuilt[n] = n === name ? change(data) : data;
  return owned(zipSync(rebuilt));
}

/** An archive with entries replaced or added (compressed, so megabytes of markup stay small). */
function withEntries(zip: Uint8Array, entries: Record<string, string>): Uint8Array<ArrayBuffer> {
  const rebuilt: Zippable = { ...unzipSync(zip) };
  for (const [n, text] of Object.entries(entries)) rebuilt[n] = strToU8(text);
  return owned(zipSync(rebuilt, { level: 6 }));
}

// ---- the cases ----

const BOOK = `${WESTERN}\n${[1, 2, 3, 4, 5, 6].map((i) => `Chapter ${i + 2}\n\n${prose(i)}\n`).join('\n')}`;
const MARKDOWN = `# The Marlowe Papers\n\n## Chapter 1\n\n${prose(1)}\n\n\`\`\`\n# not a heading\n\`\`\`\n\n## Chapter 2\n\n${prose(2)}\n`;

async function baseFiles(): Promise<{ name: string; bytes: Uint8Array<ArrayBuffer> }[]> {
  return [
    { name: 'book.txt', bytes: utf8(BOOK.replace(/\n/g, '\r\n')) },
    { name: 'western.txt', bytes: encode(BOOK, 'win1252') },
    { name: 'chinese.txt', bytes: encode(CJK.simplified, 'gb18030') },
    { name: 'japanese.txt', bytes: encode(CJK.japanese, 'shift_jis') },
    { name: 'utf16.txt', bytes: concat(new Uint8Array([0xff, 0xfe]), encode(BOOK, 'utf16le')) },
    { name: 'notes.md', bytes: utf8(MARKDOWN) },
    { name: 'page.html', bytes: utf8(makeHtml()) },
    { name: 'book.epub', bytes: makeEpub() },
    { name: 'book2.epub', bytes: makeEpub({ toc: 'ncx' }) },
    { name: 'book.docx', bytes: makeDocx() },
    { name: 'book.pdf', bytes: await makePdf(bookPages()) },
  ];
}

function randomCases(): Case[] {
  const names = ['noise.txt', 'noise.md', 'noise.html', 'noise.epub', 'noise.pdf', 'noise.docx', 'noise'];
  const lengths = [1, 7, 100, 4096, 65_536, 300_000];
  const cases: Case[] = [];
  names.forEach((name, n) =>
    lengths.forEach((length, l) => cases.push({ label: `random ${length} bytes as ${name}`, name, bytes: randomBytes(length, 1000 + n * 17 + l) })),
  );
  // Random bytes behind the signature that routes them to a reader.
  const heads: [string, Uint8Array][] = [
    ['x.pdf', strToU8('%PDF-1.7\n')],
    ['x.epub', new Uint8Array([0x50, 0x4b, 0x03, 0x04])],
    ['x.docx', new Uint8Array([0x50, 0x4b, 0x05, 0x06])],
    ['x.txt', new Uint8Array([0xef, 0xbb, 0xbf])],
    ['x.txt', new Uint8Array([0xff, 0xfe])],
    ['x.txt', new Uint8Array([0xfe, 0xff])],
    ['x', strToU8('<!DOCTYPE html><html><body><p>')],
    ['x.md', strToU8('# Title\n\n')],
  ];
  heads.forEach(([name, head], h) =>
    [50, 5_000, 120_000].forEach((length, l) =>
      cases.push({ label: `${length} random bytes after the start of ${name}`, name, bytes: concat(head, randomBytes(length, 2000 + h * 7 + l)) }),
    ),
  );
  return cases;
}

function truncatedCases(bases: { name: string; bytes: Uint8Array<ArrayBuffer> }[]): Case[] {
  const cases: Case[] = [];
  for (const { name, bytes } of bases) {
    const L = bytes.length;
    const cuts = [1, 2, 3, 8, 30, 0.1, 0.25, 0.5, 0.75, 0.9, -30, -1].map((c) => (c >= 1 ? c : c < 0 ? L + c : Math.floor(L * c)));
    for (const cut of new Set(cuts)) {
      if (cut > 0 && cut < L) cases.push({ label: `${name} cut to ${cut} of ${L} bytes`, name, bytes: owned(bytes.subarray(0, cut)) });
    }
  }
  return cases;
}

function mutatedCases(bases: { name: string; bytes: Uint8Array<ArrayBuffer> }[]): Case[] {
  const cases: Case[] = [];
  bases
    .filter((b) => /\.(epub|docx|pdf|html)$|utf16/.test(b.name))
    .forEach(({ name, bytes }, b) => {
      for (const [k, count] of [1, 2, 4, 8, 16, 64].entries()) {
        cases.push({ label: `${name} with ${count} bytes overwritten`, name, bytes: overwrite(bytes, count, 3000 + b * 11 + k) });
      }
    });
  return cases;
}

/** Each part of an EPUB and a DOCX cut in half, or replaced by noise, inside an intact archive. */
function damagedPartCases(bases: { name: string; bytes: Uint8Array<ArrayBuffer> }[]): Case[] {
  const cases: Case[] = [];
  for (const { name, bytes } of bases.filter((b) => /\.(epub|docx)$/.test(b.name) && b.name !== 'book2.epub')) {
    Object.keys(unzipSync(bytes)).forEach((part, p) => {
      cases.push({ label: `${name}: ${part} cut in half`, name, bytes: withEntry(bytes, part, (d) => d.subarray(0, d.length >> 1)) });
      cases.push({ label: `${name}: ${part} replaced by noise`, name, bytes: withEntry(bytes, part, (d) => randomBytes(d.length, 4000 + p)) });
    });
  }
  return cases;
}

function nestedCases(): Case[] {
  const html = (s: string) => utf8(`<!DOCTYPE html><html><body>${s}</body></html>`);
  const epub = makeEpub();
  const deepDivs = `${'<div>'.repeat(200_000)}deep text${'</div>'.repeat(200_000)}`;
  const chapter = (body: string) =>
    `<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head><body>${body}</body></html>`;
  const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
  const big = { limitMs: BIG_LIMIT_MS };
  return [
    { label: 'html: 200,000 nested divs', name: 'deep.html', bytes: html(deepDivs), ...big },
    { label: 'html: 200,000 unclosed divs', name: 'deep.html', bytes: html(`${'<div>'.repeat(200_000)}text`), ...big },
    { label: 'html: 4,000 nested b (under the limit)', name: 'b.html', bytes: html(`${'<b>'.repeat(4000)}bold${'</b>'.repeat(4000)}`) },
    { label: 'html: 60,000 nested tables', name: 'tables.html', bytes: html(`${'<table><tr><td>'.repeat(60_000)}cell`), ...big },
    { label: 'html: 100,000 nested lists', name: 'lists.html', bytes: html(`${'<ul><li>'.repeat(100_000)}item`), ...big },
    { label: 'html: 100,000 nested svg', name: 'svg.html', bytes: html(`<p>before</p>${'<svg>'.repeat(100_000)}`), ...big },
    { label: 'html: 1,000,000 unclosed p', name: 'p.html', bytes: html(`${'<p>'.repeat(1_000_000)}end`), ...big },
    { label: 'html: 100,000 unclosed comments', name: 'comments.html', bytes: html('<!--'.repeat(100_000)) },
    { label: 'html: 5 MB unclosed script', name: 'script.html', bytes: html(`<script>${'x=1;'.repeat(1_250_000)}`), ...big },
    { label: 'epub: chapter with 200,000 nested divs', name: 'deep.epub', bytes: withEntries(epub, { 'OEBPS/text/ch1.xhtml': chapter(deepDivs) }), ...big },
    {
      label: 'epub: table of contents nested 200,000 deep',
      name: 'deep-nav.epub',
      bytes: withEntries(epub, {
        'OEBPS/nav.xhtml': `<html><body><nav epub:type="toc">${'<ol><li><a href="text/ch1.xhtml">x</a>'.repeat(200_000)}</nav></body></html>`,
      }),
      ...big,
    },
    {
      label: 'epub: package document nested 200,000 deep',
      name: 'deep-opf.epub',
      bytes: withEntries(epub, { 'OEBPS/content.opf': `<package>${'<metadata>'.repeat(200_000)}</package>` }),
      ...big,
    },
    {
      label: 'epub: container nested 200,000 deep',
      name: 'deep-container.epub',
      bytes: withEntries(epub, { 'META-INF/container.xml': `<container>${'<rootfiles>'.repeat(200_000)}</container>` }),
      ...big,
    },
    {
      label: 'epub: 100,000 table-of-contents links to one chapter',
      name: 'links.epub',
      bytes: withEntries(epub, {
        'OEBPS/nav.xhtml': `<html><body><nav epub:type="toc"><ol>${'<li><a href="text/ch1.xhtml#s1">Chapter</a></li>'.repeat(100_000)}</ol></nav></body></html>`,
      }),
      ...big,
    },
    {
      label: 'epub: one chapter listed 100,000 times in the spine',
      name: 'spine.epub',
      bytes: withEntries(epub, {
        'OEBPS/content.opf': `<package><manifest><item id="c1" href="text/ch1.xhtml" media-type="application/xhtml+xml"/></manifest><spine>${'<itemref idref="c1"/>'.repeat(100_000)}</spine></package>`,
      }),
      ...big,
    },
    {
      label: 'docx: runs nested 200,000 deep',
      name: 'deep.docx',
      bytes: withEntries(makeDocx(), {
        'word/document.xml': `<w:document ${W}><w:body><w:p>${'<w:r>'.repeat(200_000)}<w:t>deep</w:t></w:p></w:body></w:document>`,
      }),
      ...big,
    },
  ];
}

function pathologicalCases(): Case[] {
  const big = { limitMs: BIG_LIMIT_MS };
  // Sizes are what a quadratic step could not finish in minutes; only the single-line cases need the full 10 MB.
  const sized = (mb: number, unit: string, tail = '') => unit.repeat(Math.ceil((mb * MB) / unit.length)) + tail;
  const tenMb = (unit: string, tail = '') => sized(10, unit, tail);
  const lines = (n: number, line: (i: number) => string) => Array.from({ length: n }, (_, i) => line(i)).join('\n');
  const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
  return [
    { label: '10 MB single line of words', name: 'line.txt', bytes: utf8(tenMb('the keeper walked to the harbour ')), ...big },
    { label: '10 MB single line, no spaces', name: 'a.txt', bytes: utf8(tenMb('a')), ...big },
    { label: '2 MB single Markdown heading of #s', name: 'h.md', bytes: utf8(`# ${sized(2, '# ', 'x')}`), ...big },
    { label: '4 MB single line of HTML', name: 'line.html', bytes: utf8(`<html><body><p>${sized(4, 'word <i>word</i> ')}</p></body></html>`), ...big },
    { label: '2 MB of "<"', name: 'lt.html', bytes: utf8(sized(2, '<')), ...big },
    { label: '2 MB of entities', name: 'amp.html', bytes: utf8(sized(2, '&amp;&#x41;&eacute;')), ...big },
    { label: '10 MB of blank lines, then a word', name: 'blank.txt', bytes: utf8(tenMb('\n', 'word')), ...big },
    { label: '"Chapter" then 10 MB of spaces', name: 'spaces.txt', bytes: utf8(`Chapter${tenMb(' ', 'x')}`), ...big },
    { label: '1 MB heading of ". . ."', name: 'dots.html', bytes: utf8(`<h1>a${sized(1, '. ')}x</h1><p>text</p>`), ...big },
    { label: '1 MB title of ". . ."', name: 'title.html', bytes: utf8(`<title>a${sized(1, '. ')}x</title><p>text</p>`), ...big },
    { label: '200,000 adjacent chapter lines', name: 'chapters.txt', bytes: utf8(lines(200_000, (i) => `Chapter 1: part ${i}`)), ...big },
    { label: '100,000 Markdown headings between code fences', name: 'fences.md', bytes: utf8(lines(100_000, (i) => `# heading ${i}\n\`\`\``)), ...big },
    {
      label: 'docx: one 1 MB paragraph of ". . ." in a heading style',
      name: 'dots.docx',
      bytes: withEntries(makeDocx(), {
        'word/document.xml': `<w:document ${W}><w:body><w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>a${sized(1, '. ')}x</w:t></w:r></w:p></w:body></w:document>`,
      }),
      ...big,
    },
    {
      label: 'epub: zip that claims 65,534 entries',
      name: 'claims.epub',
      bytes: (() => {
        const out = owned(makeEpub());
        const view = new DataView(out.buffer);
        view.setUint16(out.length - 22 + 10, 65_534, true);
        return out;
      })(),
    },
    {
      label: 'epub: entries pointing past the end of the file',
      name: 'offsets.epub',
      bytes: (() => {
        const out = owned(makeEpub());
        const view = new DataView(out.buffer);
        for (let i = 0; i + 46 <= out.length; i++) if (view.getUint32(i, true) === 0x02014b50) view.setUint32(i + 42, 0x7fffffff, true);
        return out;
      })(),
    },
    { label: 'epub: expands past a small cap', name: 'bomb.epub', bytes: makeEpub({ bomb: 4 * MB }), maxUnzippedBytes: 1 * MB },
  ];
}

// ---- running them, one thread at a time ----

/** The worker thread runs TypeScript through tsx's loader, registered before the worker module loads. */
function startWorker(): Worker {
  const require = createRequire(import.meta.url);
  const tsxDir = dirname(require.resolve('tsx/package.json'));
  const api = pathToFileURL(join(tsxDir, 'dist/esm/api/index.mjs')).href;
  const entry = new URL('./fuzz-ingest.worker.ts', import.meta.url).href;
  const boot = `import(${JSON.stringify(api)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`;
  // A tab's heap is a few GiB; a case that needs more than this would crash one.
  return new Worker(boot, { eval: true, resourceLimits: { maxOldGenerationSizeMb: 2048 } });
}

class Pool {
  private worker = startWorker();
  private nextId = 0;

  run(c: Case): Promise<Result> {
    const id = this.nextId++;
    const started = performance.now();
    const worker = this.worker;
    return new Promise<Result>((resolve) => {
      const done = (r: Omit<Result, keyof Case>) => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        resolve({ ...c, ...r });
      };
      const replace = () => {
        void worker.terminate();
        this.worker = startWorker();
      };
      const onMessage = (reply: FuzzReply) => {
        if (reply.id === id) done({ outcome: reply.outcome, message: reply.message, ms: reply.ms });
      };
      const onError = (e: Error) => {
        replace();
        done({ outcome: 'crashed', message: `${e.name}: ${e.message}`, ms: performance.now() - started });
      };
      const onExit = (code: number) => {
        replace();
        done({ outcome: 'crashed', message: `the thread exited with code ${code}`, ms: performance.now() - started });
      };
      const limit = c.limitMs ?? DEFAULT_LIMIT_MS;
      const timer = setTimeout(() => {
        replace();
        done({ outcome: 'hung', message: `no answer within ${limit} ms`, ms: performance.now() - started });
      }, limit);
      worker.on('message', onMessage);
      worker.once('error', onError);
      worker.once('exit', onExit);
      // A copy goes over, so the case's bytes stay intact for the report.
      const request: FuzzRequest = { id, name: c.name, bytes: owned(c.bytes) };
      if (c.maxUnzippedBytes) request.maxUnzippedBytes = c.maxUnzippedBytes;
      worker.postMessage(request, [request.bytes.buffer]);
    });
  }

  close(): Promise<number> {
    return this.worker.terminate();
  }
}

const results: Result[] = [];
let pool: Pool;
let bases: Awaited<ReturnType<typeof baseFiles>>;
const startedAt = performance.now();

beforeAll(async () => {
  pool = new Pool();
  bases = await baseFiles();
  // Warm the thread (module loading, pdf.js) outside any case's time.
  for (const b of bases) await pool.run({ label: 'warm-up', name: b.name, bytes: b.bytes, limitMs: 60_000 });
}, 90_000);

afterAll(async () => {
  await pool?.close();
});

async function runAll(cases: Case[]): Promise<Result[]> {
  const out: Result[] = [];
  for (const c of cases) out.push(await pool.run(c));
  results.push(...out);
  return out;
}

/** Every case ended in a document or a refusal with a message; the rest, described. */
function failures(rs: Result[]): string[] {
  return rs
    .filter((r) => r.outcome !== 'document' && r.outcome !== 'refused')
    .map((r) => `${r.label} (${r.name}): ${r.outcome} after ${Math.round(r.ms)} ms — ${r.message.slice(0, 400)}`);
}

describe('fuzzed files end in a document or a clear refusal, within a time bound', () => {
  it('random bytes, bare and behind each format signature', { timeout: 120_000 }, async () => {
    const rs = await runAll(randomCases());
    expect(failures(rs)).toEqual([]);
    // Noise is never a book.
    expect(rs.filter((r) => r.name.startsWith('noise') && r.outcome === 'document' && r.bytes.length > 100)).toEqual([]);
  });

  it('each format cut short at a dozen places', { timeout: 120_000 }, async () => {
    expect(failures(await runAll(truncatedCases(bases)))).toEqual([]);
  });

  it('binary formats with bytes overwritten', { timeout: 120_000 }, async () => {
    expect(failures(await runAll(mutatedCases(bases)))).toEqual([]);
  });

  it('EPUB and DOCX parts damaged inside an intact archive', { timeout: 120_000 }, async () => {
    expect(failures(await runAll(damagedPartCases(bases)))).toEqual([]);
  });

  it('deeply nested HTML, EPUB and DOCX', { timeout: 120_000 }, async () => {
    const rs = await runAll(nestedCases());
    expect(failures(rs)).toEqual([]);
    // Nesting past the limit is refused with its own message; nesting under it reads.
    expect(rs.find((r) => r.label.startsWith('html: 200,000 nested divs'))?.message).toMatch(/nests elements more than 4,096 levels deep/);
    expect(rs.find((r) => r.label.includes('under the limit'))?.outcome).toBe('document');
  });

  it('huge single lines and other regex and loop stress', { timeout: 120_000 }, async () => {
    const rs = await runAll(pathologicalCases());
    expect(failures(rs)).toEqual([]);
    expect(rs.find((r) => r.label === '10 MB single line of words')?.outcome).toBe('document');
  });

  it('ran 200+ cases, each within its own time bound', () => {
    const slowest = [...results].sort((a, b) => b.ms - a.ms).slice(0, 8);
    console.info(
      `${results.length} cases in ${Math.round((performance.now() - startedAt) / 1000)} s; slowest: ` +
        slowest.map((r) => `${r.label} ${Math.round(r.ms)} ms`).join('; '),
    );
    expect(results.length).toBeGreaterThanOrEqual(200);
  });
});
