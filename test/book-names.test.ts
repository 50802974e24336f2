import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it } from 'vitest';
import { bookName, runAnchors } from '../src/core/book-set';
import { describePlace } from '../src/core/anchors';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { buildExport, toMarkdown } from '../src/storage/export';
import { formatRunBooks } from '../src/ui/format';
import { corpusText } from './helpers';
import { bytes, whenDone } from './book-set-fixtures';
import { testRunner } from './runner-setup';

const PRIDE = 'Pride and Prejudice, by Jane Austen';

let tok: QwenTokenizer;
beforeAll(async () => {
  tok = await loadQwenTokenizer();
});

describe("a book's name", () => {
  it('is its title where the file has one, else the file’s name', () => {
    expect(bookName({ name: '1342-h.htm', title: PRIDE })).toBe(PRIDE);
    expect(bookName({ name: '1342-h.htm', title: `  Pride and Prejudice,\n   by Jane Austen ` })).toBe(PRIDE);
    expect(bookName({ name: 'frankenstein.txt' })).toBe('frankenstein.txt');
    expect(bookName({ name: 'frankenstein.txt', title: '  ' })).toBe('frankenstein.txt');
    // A set's book without a title keeps its file's name without the extension as its title: that is no title.
    expect(bookName({ name: 'frankenstein.txt', title: 'frankenstein' })).toBe('frankenstein.txt');
  });

  it('is the same in a set run’s name, its places, its list of books and its Markdown export, titled or not', { timeout: 120_000 }, async () => {
    const t = await testRunner(new ExtractiveEngine(tok), tok);
    const frankenstein = await t.library.ingest('frankenstein.txt', bytes(corpusText('frankenstein.txt').slice(0, 20_000)), 'extractive');
    const html = `<!DOCTYPE html><html><head><title>${PRIDE}</title></head><body><h1>Chapter 1</h1><p>It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife.</p></body></html>`;
    const pride = await t.library.ingest('1342-h.htm', bytes(html), 'extractive');
    const runId = await t.runner.start({
      documentId: frankenstein.id,
      documentIds: [frankenstein.id, pride.id],
      question: 'What must a single man in possession of a good fortune be in want of?',
      engineId: 'extractive',
      chunkTokens: 1000,
      memoryTokens: 256,
    });
    const run = await whenDone(t.store, runId);
    const names = ['frankenstein.txt', PRIDE];
    expect(run.books!.map(bookName)).toEqual(names);
    expect(run.documentName).toBe(names.join(' + '));
    expect(formatRunBooks(run)).toBe(names.join(' + '));
    // Every place names its book so.
    const anchors = await runAnchors(run, (id) => t.store.getAnchors(id));
    expect(describePlace(anchors, run.books![0]!.body)).toMatch(/^frankenstein\.txt( · |$)/);
    expect(describePlace(anchors, run.books![1]!.body)).toBe(`${PRIDE} · Chapter 1`);
    const markdown = toMarkdown(buildExport({ run, revisions: await t.store.listRevisions(runId), memories: await t.store.listMemories(runId) }));
    expect(markdown).toContain(`1. frankenstein.txt\n2. ${PRIDE}\n`);
    expect(markdown).not.toContain('(1342-h.htm)');
    expect(markdown).toMatch(new RegExp(`^## Revision \\d+ \\(chunk \\d+ of \\d+ · ${PRIDE}\\)$`, 'm'));
  });

  it('names the first of many books the same way in a run’s short name', () => {
    const books = ['a.txt', 'b.txt', 'c.txt'].map((name) => ({ name, title: name.slice(0, 1), documentId: name, start: 0, body: 0, end: 0 }));
    const run = { documentName: 'x', books: [{ ...books[0]!, name: '1342-h.htm', title: PRIDE }, ...books] };
    expect(formatRunBooks(run)).toBe(`${PRIDE} and 3 more books`);
  });
});
