import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it } from 'vitest';
import { describePlace, sectionPlace } from '../src/core/anchors';
import { runAnchors } from '../src/core/book-set';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { ingestBytes } from '../src/ingest/ingest';
import { RUN_ANSWER } from '../src/storage/db';
import { describeRevision } from '../src/ui/inspector/Timeline';
import { corpusBytes } from './helpers';
import { testRunner, until } from './runner-setup';

let tok: QwenTokenizer;
beforeAll(async () => {
  tok = await loadQwenTokenizer();
});

describe("a section's place", () => {
  it('names where a section starts and the chapter it runs into: "Letter 4 – Chapter 1"', async () => {
    const doc = await ingestBytes('frankenstein.txt', corpusBytes('frankenstein.txt'));
    const chapter1 = doc.anchors.find((a) => a.label === 'Chapter 1')!.at;
    expect(sectionPlace(doc.anchors, chapter1 - 3000, chapter1 + 3000)).toBe('Letter 4 – Chapter 1');
    expect(sectionPlace(doc.anchors, chapter1, chapter1 + 3000)).toBe('Chapter 1');
    expect(sectionPlace(doc.anchors, chapter1 - 3000, chapter1)).toBe('Letter 4');
    expect(sectionPlace([], 0, 10)).toBe('');
  });

  it('names the revision list’s section, and in the sources of an answer the cited sentence’s own place', { timeout: 120_000 }, async () => {
    // The opening of Frankenstein: the letters, then Chapter 1, with a question whose answer lies on both sides.
    const book = new TextDecoder().decode(corpusBytes('frankenstein.txt'));
    const text = book.slice(0, [...book.matchAll(/\nChapter 2\r?\n/g)].at(-1)!.index); // the heading, not the table of contents
    const t = await testRunner(new ExtractiveEngine(tok), tok);
    const doc = await t.library.ingest('frankenstein.txt', new TextEncoder().encode(text), 'extractive');
    const runId = await t.runner.start({
      documentId: doc.id,
      question: 'Who was the stranger Walton took on board, and who were his father and mother?',
      engineId: 'extractive',
      chunkTokens: 2000,
      memoryTokens: 256,
      temperature: 0,
      topP: 1,
    });
    await until(async () => (await t.store.getSources(runId, RUN_ANSWER)) !== undefined);
    const run = (await t.store.getRun(runId))!;
    const revisions = await t.store.listRevisions(runId);
    const anchors = await runAnchors(run, (id) => t.store.getAnchors(id));
    const sources = (await t.store.getSources(runId, RUN_ANSWER))!;
    expect(sources.citations.length).toBeGreaterThan(0);
    // At least one cited section runs from one part of the book into the next: the revision list names the range,
    // the source the sentence's own part, which a reader of the paper book looks up.
    expect(
      sources.citations.some(
        (c) => c.sentence && describePlace(anchors, c.sentence.start) !== sectionPlace(anchors, revisions[c.revision]!.start, revisions[c.revision]!.end),
      ),
    ).toBe(true);
    for (const c of sources.citations) {
      const r = revisions[c.revision]!;
      expect(c.place).toBe(describePlace(anchors, c.sentence!.start));
      expect(describeRevision(r, { total: revisions.length, bookLength: text.length, anchors })).toContain(`, ${sectionPlace(anchors, r.start, r.end)},`);
    }
  });
});
