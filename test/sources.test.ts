import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import type { RunEvent } from '../src/agent/protocol';
import { RUN_ANSWER, type SourcesRecord } from '../src/storage/db';
import { buildExport, parseExport, toMarkdown } from '../src/storage/export';
import { bookRange } from '../src/core/book-set';
import { corpusText } from './helpers';
import { testRunner, until } from './runner-setup';

const QUESTION = 'Where was the warden of Gull Rock born?';
const FACT_1 = 'The warden of Gull Rock is Orrin Vale.';
const FACT_2 = 'Orrin Vale was born in Port Meridian, far from the sea.';
const FOLLOW_UP = 'Who is the warden of Gull Rock?';

let tok: QwenTokenizer;
let text: string;
let bytes: Uint8Array<ArrayBuffer>;

beforeAll(async () => {
  tok = await loadQwenTokenizer();
  // A long stretch of Frankenstein with the two parts of the fact planted far apart, each its own paragraph.
  const book = corpusText('frankenstein.txt').slice(60_000, 160_000);
  const at = (f: number) => book.indexOf('\n\n', Math.floor(book.length * f));
  const [a, b] = [at(0.2), at(0.75)];
  text = `${book.slice(0, a)}\n\n${FACT_1}${book.slice(a, b)}\n\n${FACT_2}${book.slice(b)}`;
  bytes = new TextEncoder().encode(text);
}, 60_000);

/** A finished run over the planted book, with what its worker published. */
async function finishedRun() {
  const t = await testRunner(new ExtractiveEngine(tok), tok);
  const doc = await t.library.ingest('gull-rock.txt', bytes, 'extractive');
  const runId = await t.runner.start({
    documentId: doc.id,
    question: QUESTION,
    engineId: 'extractive',
    chunkTokens: 1000,
    memoryTokens: 256,
    temperature: 0,
    topP: 1,
  });
  await until(async () => (await t.store.getSources(runId, RUN_ANSWER)) !== undefined);
  return { ...t, doc, runId, run: (await t.store.getRun(runId))!, revisions: await t.store.listRevisions(runId) };
}

/** The revision (from 0) whose section holds `sentence`. */
function sectionOf(revisions: readonly { start: number; end: number }[], sentence: string): number {
  const at = text.indexOf(sentence);
  return revisions.findIndex((r) => r.start <= at && at < r.end);
}

describe('the sources of an answer, traced in the worker', () => {
  it('are stored once the answer is, citing each part of a two-part fact at the section it was read in, and every tab hears of them', async () => {
    const { store, runId, run, revisions, events } = await finishedRun();
    expect(run.status).toBe('done');
    expect(revisions.length).toBeGreaterThan(20);
    const sources = (await store.getSources(runId, RUN_ANSWER))!;
    expect(sources).toMatchObject({ runId, answer: RUN_ANSWER, memoryIndex: revisions.length - 1, sections: true, unsourced: [] });
    for (const fact of [FACT_1, FACT_2]) {
      const c = sources.citations.find((c) => c.sentence?.text === fact);
      expect(c, fact).toBeDefined();
      expect(c!.revision).toBe(sectionOf(revisions, fact));
      expect(c!.keptUntil).toBe(revisions.length - 1);
      // Positions are characters of the book: the export's readers find the sentence with them.
      expect(text.slice(c!.sentence!.start, c!.sentence!.end)).toBe(fact);
    }
    // Told after the run's end, which is told first.
    const told = events.findIndex((e: RunEvent) => e.type === 'sources' && e.runId === runId && e.answer === RUN_ANSWER);
    expect(told).toBeGreaterThan(events.findIndex((e: RunEvent) => e.type === 'status' && e.status === 'done'));
  });

  it('are traced for each follow-up answer too, kept in both exports, traced again on import where the book is, kept as exported where it is not, and deleted with the run', async () => {
    const first = await finishedRun();
    const followUp = await first.runner.askFollowUp(first.runId, FOLLOW_UP);
    const followed = (await first.store.getSources(first.runId, followUp.index))!;
    expect(followed.citations.map((c) => c.sentence?.text)).toContain(FACT_1);

    const all = await first.store.listSources(first.runId);
    expect(all.map((s) => s.answer)).toEqual([RUN_ANSWER, 0]);
    const data = buildExport({
      run: first.run,
      revisions: first.revisions,
      memories: await first.store.listMemories(first.runId),
      followUps: await first.store.listFollowUps(first.runId),
      documentSha256: first.doc.id,
      sources: all,
    });
    // JSON: revision numbers and positions; Markdown: the sentences quoted with their places.
    expect(data.sources).toEqual(all.map(({ runId: _r, ...s }) => s));
    const markdown = toMarkdown(data);
    const n = sectionOf(first.revisions, FACT_2) + 1;
    const place = all[0]!.citations.find((c) => c.sentence?.text === FACT_2)!.place;
    // The sentence's own chapter, not the range of chapters its section reaches.
    expect(place).toMatch(/^Chapter \d+$/);
    expect(markdown).toContain(
      `> ${FACT_2}\n\n— ${place} · section ${n} of ${first.revisions.length} · written down at revision ${n}, kept to revision ${first.revisions.length}`,
    );
    expect(markdown.indexOf('**Sources:**')).toBeLessThan(markdown.indexOf('## Revision 1'));
    const json = JSON.stringify(data);
    expect(parseExport(json).sources).toEqual(all);

    // Another browser with the same book traces them itself; one without it keeps the exported ones.
    const withBook = await testRunner(new ExtractiveEngine(tok), tok);
    await withBook.library.ingest('gull-rock.txt', bytes, 'extractive');
    await withBook.runner.importRun(json);
    const again = await withBook.store.listSources(first.runId);
    expect(again.map(strip)).toEqual(all.map(strip));
    expect(again[0]!.tracedAt).toBeGreaterThanOrEqual(all[0]!.tracedAt);
    const without = await testRunner(new ExtractiveEngine(tok), tok);
    await without.runner.importRun(json);
    expect(await without.store.listSources(first.runId)).toEqual(all);

    await first.runner.deleteRun(first.runId);
    expect(await first.store.listSources(first.runId)).toEqual([]);
  });

  it('name the revisions that wrote the facts down for an imported run whose book is not here and whose export has none', async () => {
    const first = await finishedRun();
    const data = buildExport({ run: first.run, revisions: first.revisions, memories: await first.store.listMemories(first.runId) });
    const other = await testRunner(new ExtractiveEngine(tok), tok);
    await other.runner.importRun(JSON.stringify(data));
    const sources = (await other.store.getSources(first.runId, RUN_ANSWER))!;
    expect(sources.sections).toBe(false);
    expect(sources.citations.map((c) => c.revision)).toEqual(expect.arrayContaining([FACT_1, FACT_2].map((f) => sectionOf(first.revisions, f))));
    expect(sources.citations.every((c) => c.sentence === undefined)).toBe(true);
  });

  it('name the book of each cited sentence in a run over several books', async () => {
    const t = await testRunner(new ExtractiveEngine(tok), tok);
    const filler = text.slice(0, 6000);
    const enc = (s: string) => new TextEncoder().encode(s) as Uint8Array<ArrayBuffer>;
    const a = await t.library.ingest('harbour.txt', enc(`${filler}\n\n${FACT_1}\n\n${filler}`), 'extractive');
    const b = await t.library.ingest('families.txt', enc(`${filler.slice(3000)}\n\n${FACT_2}\n\n${filler.slice(0, 3000)}`), 'extractive');
    const runId = await t.runner.start({
      documentId: a.id,
      documentIds: [a.id, b.id],
      question: QUESTION,
      engineId: 'extractive',
      chunkTokens: 600,
      memoryTokens: 256,
    });
    await until(async () => (await t.store.getSources(runId, RUN_ANSWER)) !== undefined);
    const books = (await t.store.getRun(runId))!.books!;
    const sources = (await t.store.getSources(runId, RUN_ANSWER))!;
    for (const [fact, book] of [
      [FACT_1, 'harbour.txt'],
      [FACT_2, 'families.txt'],
    ] as const) {
      const c = sources.citations.find((c) => c.sentence?.text === fact)!;
      expect(c.place).toBe(book);
      // Positions are characters of the set's text, as its revisions' are: here, of the book named.
      const at = bookRange(books, c.sentence!.start, c.sentence!.end);
      expect(await t.store.readText(books[at.book]!.documentId, at.from, at.to)).toBe(fact);
    }
  });

  it('trace any revision’s memory, note by note, for the inspector', async () => {
    const { runner, runId, revisions } = await finishedRun();
    const last = await runner.traceMemory(runId, revisions.length - 1);
    expect(last.sections).toBe(true);
    const note = last.notes.find((n) => n.text === FACT_2)!;
    expect(note.citations.map((c) => c.revision)).toEqual([sectionOf(revisions, FACT_2)]);
    expect(await runner.traceMemory(runId, revisions.length + 5)).toEqual({ notes: [], sections: false });
  });
});

/** A record without when it was traced. */
function strip({ tracedAt: _t, ...s }: SourcesRecord) {
  return s;
}
