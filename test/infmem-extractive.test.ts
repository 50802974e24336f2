/**
 * InfMem's loop read through by the extractive engine's fixed rules, no model:
 * on a real book with a fact planted near its start, the planner searches,
 * BM25 brings the fact's passage to the writer, the planner then votes to
 * stop, and the read ends long before the book does, with the fact as its
 * answer. The same read from the command line says where it stopped.
 */
import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InfmemEvent, infmemLoop } from '../src/core/infmem/loop';
import { type InfmemDocument, prepareDocument } from '../src/core/infmem/retrieval';
import { readInfmemCommand } from '../src/cli/read-infmem';
import { extractiveInfmemSteps } from '../src/engines/extractive/infmem-steps';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import type { ReadSources } from '../src/cli/sources';
import { fakeTerminal, screen } from './support/terminal';

const FACT = 'The lighthouse keeper Ortiz buried the brass compass under the old mill at Calloway.';
const QUESTION = 'Where did the lighthouse keeper Ortiz bury the brass compass?';
const frankenstein = readFileSync(new URL('../data/haystack/frankenstein.txt', import.meta.url), 'utf8');
// Planted in the book's first chunk, after its opening paragraphs.
const at = frankenstein.indexOf('\n\n', 3000);
const BOOK = `${frankenstein.slice(0, at)}\n\n${FACT}${frankenstein.slice(at)}`;

let tokenizer: QwenTokenizer;
let document: InfmemDocument;
let dir: string;

beforeAll(async () => {
  tokenizer = await loadQwenTokenizer();
  document = prepareDocument(BOOK, tokenizer);
  dir = mkdtempSync(join(tmpdir(), 'memagent-infmem-extractive-'));
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function read(earlyStop: number): Promise<InfmemEvent[]> {
  const events: InfmemEvent[] = [];
  for await (const e of infmemLoop({ document, question: QUESTION, steps: extractiveInfmemSteps(document, tokenizer), earlyStop })) events.push(e);
  return events;
}

describe('InfMem read by the extractive engine’s stand-ins', () => {
  it('searches, writes the retrieved fact into the memory, votes to stop three times and answers long before the end', async () => {
    const total = document.chunks.length;
    expect(total).toBeGreaterThan(10);
    const events = await read(3);
    const plans = events.filter((e) => e.kind === 'plan');
    const writes = events.filter((e) => e.kind === 'write');
    const answer = events.at(-1)!;
    // The first plan searches (an empty memory answers nothing), for the question's rarest words.
    expect(plans[0]).toMatchObject({ stop: false, votes: 0, ends: false });
    const query = plans[0]!.retrievals[0]!.query;
    expect(query.split(' ')).toEqual(expect.arrayContaining(['ortiz']));
    // BM25 brought the fact's unit to the first write, which kept the fact.
    expect(writes[0]!.units).toHaveLength(4);
    const factUnit = document.units.findIndex((u) => u.text.includes('brass compass'));
    expect(writes[0]!.units).toContain(factUnit);
    expect(writes[0]!.memory).toContain('under the old mill at Calloway');
    // Then three stop votes in a row: the two chunks between them are still written, the third is not.
    expect(plans.slice(1).map((p) => [p.stop, p.votes, p.ends])).toEqual([
      [true, 1, false],
      [true, 2, false],
      [true, 3, true],
    ]);
    expect(writes.map((w) => w.index)).toEqual([0, 1, 2]);
    expect(answer).toMatchObject({ kind: 'answer', step: 4 });
    if (answer.kind !== 'answer') throw new Error('unreachable');
    expect(answer.answer).toContain('under the old mill at Calloway');
    expect(answer.step).toBeLessThan(total);
  });

  it('a read resumed from the state a write left goes on exactly as the read that was never stopped', async () => {
    const whole = await read(3);
    const writes = whole.filter((e) => e.kind === 'write');
    const first = writes[0]!;
    // The state after chunk 1: one search in the history, no votes yet.
    expect(first).toMatchObject({ votes: 0, history: [expect.objectContaining({ query: expect.stringContaining('ortiz') })] });
    const second = writes[1]!;
    expect(second.votes).toBe(1);
    const resumed: InfmemEvent[] = [];
    const resume = { nextChunk: second.index + 1, memory: second.memory, votes: second.votes, history: second.history };
    for await (const e of infmemLoop({ document, question: QUESTION, steps: extractiveInfmemSteps(document, tokenizer), earlyStop: 3, resume }))
      resumed.push(e);
    const after = whole.slice(whole.indexOf(second) + 1);
    expect(resumed.map((e) => e.kind)).toEqual(after.map((e) => e.kind));
    expect(resumed.at(-1)).toMatchObject({ kind: 'answer', step: 4, answer: expect.stringContaining('under the old mill at Calloway') });
    // Resumed with no votes carried, the same state stops one chunk later: the counter is part of the state.
    const fresh: InfmemEvent[] = [];
    for await (const e of infmemLoop({
      document,
      question: QUESTION,
      steps: extractiveInfmemSteps(document, tokenizer),
      earlyStop: 3,
      resume: { ...resume, votes: 0 },
    }))
      fresh.push(e);
    expect(fresh.at(-1)).toMatchObject({ kind: 'answer', step: 5 });
  });

  it('with an early stop of 1, stops before writing anything when the first plan already votes', async () => {
    // The planted fact is searched for first, so one vote cannot come before a write; a question the memory "holds"
    // from the start (none of its words can be searched) votes at once.
    const events: InfmemEvent[] = [];
    for await (const e of infmemLoop({ document, question: 'Who?', steps: extractiveInfmemSteps(document, tokenizer), earlyStop: 1 })) events.push(e);
    expect(events.map((e) => e.kind)).toEqual(['plan', 'answer']);
    expect(events[0]).toMatchObject({ stop: true, votes: 1, ends: true });
    expect(events[1]).toMatchObject({ step: 1 });
  });

  it('memagent read --method infmem --engine extractive says where the read stopped and prints the answer', async () => {
    const book = join(dir, 'book.txt');
    writeFileSync(book, BOOK);
    let out = '';
    let err = '';
    const sink = (write: (s: string) => void) => new Writable({ write: (chunk, _e, done) => (write(String(chunk)), done()) });
    const code = await readInfmemCommand(['read', book, '--method', 'infmem', '--engine', 'extractive', '-q', QUESTION].slice(1), () => 0, {
      stdout: sink((s) => (out += s)),
      stderr: sink((s) => (err += s)),
    });
    expect(code, err).toBe(0);
    expect(out).toContain('under the old mill at Calloway');
    expect(err).toMatch(/the extractive engine \(fixed rules, no model/);
    expect(err).toMatch(/chunk 1 of \d+: planner searched "[^"]*ortiz[^"]*"/);
    expect(err).toContain('Stopped before chunk 4: 3 votes in a row. Answering from the memory.');
    expect(err).toMatch(/Read 4 of \d+ chunks in /);
  }, 60_000);

  it('memagent read --method infmem traces the answer to the planted sentence, in words and in --json as MemAgent’s read gives them', async () => {
    const book = join(dir, 'sourced.txt');
    writeFileSync(book, BOOK);
    const run = async (extra: string[]) => {
      let out = '';
      let err = '';
      const sink = (write: (s: string) => void) => new Writable({ write: (chunk, _e, done) => (write(String(chunk)), done()) });
      const args = [book, '--method', 'infmem', '--engine', 'extractive', '-q', QUESTION, '--force', ...extra];
      const code = await readInfmemCommand(args, () => 0, { stdout: sink((s) => (out += s)), stderr: sink((s) => (err += s)) });
      expect(code, err).toBe(0);
      return out;
    };
    const words = await run([]);
    // The fact is in chunk 1, and BM25 also brought its passage to the first write: revision 1 wrote it down.
    expect(words).toMatch(
      /\nSources:\n {2}1\. "The lighthouse keeper Ortiz buried the brass compass under the old mill at Calloway\."\n {5}Letter 1 · section 1 of [\d,]+ · written down at revision 1, kept to revision 3\n/,
    );
    const line = JSON.parse(await run(['--json'])) as { type: string; answer: string; sources: ReadSources };
    expect(line.type).toBe('answer');
    const cited = line.sources.citations.map((c) => c.sentence?.text);
    expect(cited).toContain(FACT);
    const fact = line.sources.citations.find((c) => c.sentence?.text === FACT)!;
    expect(fact.revision).toBe(1);
    expect(BOOK.slice(fact.sentence!.start, fact.sentence!.end)).toBe(FACT);
    // The journal keeps them on its answer line, as MemAgent's does; a resume of the finished read prints them again.
    const kept = readFileSync(`${book}.infmem.jsonl`, 'utf8').trim().split('\n').at(-1)!;
    expect((JSON.parse(kept) as { sources: ReadSources }).sources).toEqual(line.sources);
  }, 60_000);

  it('on a terminal, redraws each question’s line: its chunk and votes to stop, then where votes stopped it', async () => {
    const book = join(dir, 'terminal.txt');
    writeFileSync(book, BOOK);
    const term = fakeTerminal();
    let out = '';
    const stdout = new Writable({ write: (chunk, _e, done) => ((out += String(chunk)), done()) });
    const second = 'Who wrote the letters to Mrs. Saville?';
    const args = [book, '--method', 'infmem', '--engine', 'extractive', '-q', QUESTION, '-q', second, '--early-stop', '2', '--force'];
    expect(await readInfmemCommand(args, () => 0, { stdout, stderr: term })).toBe(0);
    const total = document.chunks.length;
    const drawn = term.text();
    // No line per step: each step redrew the questions' lines instead.
    expect(drawn).not.toMatch(/chunk 1 of [\d,]+: planner/);
    expect(drawn).toMatch(new RegExp(`\\] q1 · chunk 1/${total} · \\d+% · 0 of 2 votes to stop`));
    expect(drawn).toMatch(new RegExp(`\\] q1 · chunk 2/${total} · \\d+% · 1 of 2 votes to stop`));
    expect(drawn).toMatch(/\] q2 · chunk 1\//);
    // Q1 stops before chunk 3 on two votes; its line says so while Q2 reads on, and the message stays above.
    expect(drawn).toMatch(new RegExp(`\\] q1 · stopped before chunk 3 of ${total} after 2 votes · answering`));
    expect(drawn).toMatch(new RegExp(`\\] q1 · stopped before chunk 3 of ${total} after 2 votes · answered[^\\n]*\\n[^\\n]*\\] q2 · chunk \\d+/`));
    const shown = screen(drawn);
    expect(shown).toContain('q1: Stopped before chunk 3: 2 votes in a row. Answering from the memory.');
    expect(out).toMatch(/^Question 1: .*\nThe lighthouse keeper Ortiz buried the brass compass under the old mill at Calloway\n\nSources:\n/);
  }, 60_000);

  it('refuses another engine, and a server beside the extractive engine', async () => {
    const refused = (args: string[]) => readInfmemCommand(['book.txt', '--method', 'infmem', '-q', 'Q', ...args], () => 0, {});
    await expect(refused(['--engine', 'wllama'])).rejects.toThrow(
      /with a server \(--base-url\), --engine webllm or --engine extractive, not --engine wllama \(wllama runs in the browser only\)/,
    );
    await expect(refused(['--engine', 'extractive', '--base-url', 'http://127.0.0.1:9/v1'])).rejects.toThrow(/reads without a server/);
  });
});
