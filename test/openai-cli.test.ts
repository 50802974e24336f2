import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliOutcome, runCli } from './support/cli';
import { type OpenAITestServer, startOpenAIServer } from './support/openai-server';

/** The corpus book, as its real bytes (BOM, CRLF, Gutenberg header), relative to the repository root. */
const BOOK = '../shared/corpus/frankenstein.txt';
const QUESTION = 'Which university did Victor become a student at when he was seventeen?';

/** The CLI, as its TypeScript or as installed (`npx memagent`). */
function memagent(args: string[], options: { installed?: boolean } = {}): Promise<CliOutcome> {
  // No prompt file can be fetched from here (a closed port), so reads use the app's wording, as offline, whatever the network.
  const hermetic = args[0] === 'read' || args[0] === 'eval' ? ['--prompts-base', 'http://127.0.0.1:9'] : [];
  return runCli([...args, ...hermetic], { ...options, env: { MEMAGENT_CACHE_DIR: join(tmpdir(), 'memagent-cli-no-cache') } });
}

interface Line {
  type: string;
  index?: number;
  memory?: string;
  answer?: string;
  retries?: number;
  chunks?: [number, number, number][];
  question?: string;
}

function journal(path: string): Line[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
}

let server: OpenAITestServer;
let dir: string;
/** The uninterrupted read: what every other read must reproduce. */
let reference: Line[];

beforeAll(async () => {
  server = await startOpenAIServer();
  dir = mkdtempSync(join(tmpdir(), 'memagent-cli-'));
});

afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('memagent CLI', () => {
  it('reads Frankenstein end to end, printing progress and the answer, every revision in the journal', async () => {
    const out = join(dir, 'whole.jsonl');
    const before = server.chatRequests.length;
    const r = await memagent(['read', BOOK, '--question', QUESTION, '--base-url', server.url, '--model', 'memagent-test', '--out', out]);
    expect(r.stderr).toMatch(/frankenstein\.txt: [\d,]+ tokens in \d+ chunks of up to 5,000, memory 1,024 tokens; model memagent-test/);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Ingolstadt');

    reference = journal(out);
    const [header, ...rest] = reference;
    const chunks = header!.chunks!;
    expect(header).toMatchObject({ type: 'memagent-read', question: QUESTION });
    expect(chunks.length).toBeGreaterThan(15);
    expect(r.stderr).toContain(`chunk ${chunks.length}/${chunks.length} (100%)`);
    expect(rest.map((l) => l.index ?? l.type)).toEqual([...chunks.map((_, i) => i), 'answer']);
    // The answer, then where it came from in the book.
    const [answer, sources] = r.stdout.split('\nSources:\n');
    expect(rest.at(-1)!.answer).toBe(answer!.trim());
    // The answer may take more than one sentence (each part of the question): the Ingolstadt one is among its sources.
    expect(sources).toMatch(/^ {2}\d\. ".*Ingolstadt.*"\n {5}Chapter \d+ · section \d+ of \d+ · written down at revision \d+/m);
    expect(server.chatRequests.slice(before).map((q) => q.status)).toEqual(Array(chunks.length + 1).fill(200));
  });

  it('after the server stops mid-read and comes back, --resume reads each remaining chunk once', async () => {
    const flaky = await startOpenAIServer();
    const out = join(dir, 'interrupted.jsonl');
    try {
      // The eighth request is held, then the server goes away under it.
      const held = flaky.holdAfterNext(7);
      const first = memagent(['read', BOOK, '-q', QUESTION, '--base-url', flaky.url, '--out', out, '--retries', '2', '--retry-delay', '50']);
      await held;
      await flaky.stop();
      const stopped = await first;
      expect(stopped.code).toBe(1);
      expect(stopped.stderr).toMatch(/Gave up after 3 attempts/);
      expect(stopped.stderr).toContain(
        `7 of ${reference[0]!.chunks!.length} chunks are saved in ${out}; run the same command with --resume to continue from chunk 8.`,
      );
      expect(
        journal(out)
          .slice(1)
          .map((l) => l.index),
      ).toEqual([0, 1, 2, 3, 4, 5, 6]);
      // A line half written when a process dies does not count.
      appendFileSync(out, '{"type":"revision","index":7,"memo');

      await flaky.start();
      const resumed = await memagent(['read', BOOK, '--base-url', flaky.url, '--out', out, '--resume']);
      expect(resumed.stderr).toContain('Resuming at chunk 8');
      expect(resumed.code).toBe(0);
      // Each chunk exactly once, and the same memories and answer as the read that was never interrupted.
      expect(journal(out).map((l) => [l.type, l.index, l.memory, l.answer])).toEqual(reference.map((l) => [l.type, l.index, l.memory, l.answer]));
      const served = flaky.chatRequests.filter((q) => q.status === 200).map((q) => q.section ?? 'final');
      expect(served).toHaveLength(reference.length - 1);
      expect(new Set(served).size).toBe(served.length);
    } finally {
      await flaky.stop();
    }
  });

  it('as installed (npx memagent), refuses to overwrite a journal or to resume it for another question', async () => {
    const out = join(dir, 'other.jsonl');
    writeFileSync(out, `${JSON.stringify(reference[0])}\n`);
    const [again, other] = await Promise.all([
      memagent(['read', BOOK, '-q', QUESTION, '--base-url', server.url, '--out', out], { installed: true }),
      memagent(['read', BOOK, '-q', 'Who is Elizabeth?', '--base-url', server.url, '--out', out, '--resume']),
    ]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already holds a read. Continue it with --resume, start over with --force');
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('reads for another question');
  });

  it('refuses to resume a journal written by another engine or model, unless --force says it is meant', async () => {
    const out = join(dir, 'extractive.jsonl');
    const first = await memagent(['read', BOOK, '-q', QUESTION, '--engine', 'extractive', '--out', out]);
    expect(first.code).toBe(0);
    const other = await memagent(['read', BOOK, '--base-url', server.url, '--model', 'memagent-test', '--out', out, '--resume']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('was read with --engine extractive, not --engine openai (model memagent-test): resuming would mix two models');
    const forced = await memagent(['read', BOOK, '--base-url', server.url, '--model', 'memagent-test', '--out', out, '--resume', '--force']);
    expect(forced.code).toBe(0);
    expect(forced.stderr).toContain('is a finished read');
  });

  it('evaluates with several samples in flight', async () => {
    const gated = await startOpenAIServer();
    try {
      const json = join(dir, 'eval.json');
      // Every request waits unanswered until four are open at once: the count does not hang on how fast
      // this machine prepares the samples, and a client that sent fewer at a time would never get here.
      void gated.holdAfterNext(0);
      const running = memagent([
        'eval',
        '--base-url',
        gated.url,
        '--tasks',
        'niah_single_1',
        '--lengths',
        '2k',
        '--samples',
        '4',
        '--chunk',
        '1000',
        '--memory',
        '256',
        '--concurrency',
        '4',
        '--json',
        json,
      ]);
      await gated.whenHeld(4);
      gated.release();
      const r = await running;
      expect(r.stderr).toContain('[4/4] niah_single_1 2K');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/4 samples, 4 at a time/);
      expect(r.stdout).toMatch(/niah_single_1\s+100\.0/);
      expect(gated.maxInFlight).toBe(4);
      const report = JSON.parse(readFileSync(json, 'utf8')) as { samples: unknown[] };
      expect(report.samples).toHaveLength(4);
    } finally {
      await gated.stop();
    }
  }, 120_000);
});
