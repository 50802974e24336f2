import { beforeAll, describe, expect, it } from 'vitest';
import { chunkAll, type ChunkSpan } from '../src/core/chunker';
import { Tracer } from '../src/core/citations/trace';
import { memoryLoop } from '../src/core/loop';
import { DEFAULT_TEMPLATES } from '../src/core/prompts';
import { sentenceSpans } from '../src/core/sentences';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { ingestBytes } from '../src/ingest/ingest';
import { corpusBytes, corpusText } from './helpers';

function sentences(text: string): string[] {
  return sentenceSpans(text).map((s) => text.slice(s.start, s.end));
}

/** A sentence cut short: it ends at an abbreviation or an initial, or the next one begins in lower case. */
const CUT_AT_ABBREVIATION = /(?:^|[^\p{L}.])(?:Mr|Mrs|Messrs|Dr|St|\p{Lu})\.$/u;

describe('the sentence segmenter', () => {
  it('ends no sentence at a title, an initial, "No. 5", "p. 12", an ellipsis or a quotation followed by "said she"', () => {
    expect(
      sentences(
        'It was Mr. Darcy who spoke. Mrs. Bennet laughed at Dr. Jones of St. Paul. J. R. Tolkien lived at No. 5 Northmoor Road, see p. 12. ' +
          'He waited... And waited. "Stop!" cried Elizabeth. Did he go? No. He stayed.',
      ),
    ).toEqual([
      'It was Mr. Darcy who spoke.',
      'Mrs. Bennet laughed at Dr. Jones of St. Paul.',
      'J. R. Tolkien lived at No. 5 Northmoor Road, see p. 12.',
      'He waited... And waited.',
      '"Stop!" cried Elizabeth.',
      'Did he go?',
      'No.',
      'He stayed.',
    ]);
  });

  it('cuts Chinese at 。！？ and keeps its places', () => {
    const text = '李明来到了北港。他找到了钥匙！钥匙打开了什么？灯塔的门。';
    expect(sentences(text)).toEqual(['李明来到了北港。', '他找到了钥匙！', '钥匙打开了什么？', '灯塔的门。']);
  });

  it('keeps hard-wrapped lines and offsets, and ends a sentence at a blank line', () => {
    const text = 'Mr.\nDarcy bowed.\n\nChapter 2\n\nShe left';
    const spans = sentenceSpans(text);
    expect(spans.map((s) => text.slice(s.start, s.end))).toEqual(['Mr.\nDarcy bowed.', 'Chapter 2', 'She left']);
  });

  it("cuts Frankenstein's letters and chapters without a break at St., Dec., M. Waldman or Mr. Kirwin", () => {
    const book = corpusText('frankenstein.txt');
    const all = sentences(book.slice(0, book.indexOf('End of the Project Gutenberg')));
    expect(all.filter((s) => CUT_AT_ABBREVIATION.test(s) && s !== 'R.W.')).toEqual([]);
    expect(all).toContain('St. Petersburgh, Dec. 11th, 17—.');
    expect(all.some((s) => s.includes('M. Waldman, a fellow'))).toBe(true);
    expect(all.filter((s) => s.includes('Mr. Kirwin')).every((s) => !s.startsWith('Kirwin'))).toBe(true);
  });
});

describe('Pride and Prejudice from its PDF', () => {
  let text: string;
  let tok: QwenTokenizer;
  let chunks: ChunkSpan[];
  beforeAll(async () => {
    text = (await ingestBytes('pride-and-prejudice.pdf', corpusBytes('pride-and-prejudice.pdf'))).text;
    tok = await loadQwenTokenizer();
    chunks = chunkAll(text, tok, 2000);
  }, 600_000);

  // Cut a chunk at a time, as a read cuts it (Intl.Segmenter slows down badly on the PDF's one 680,000-character block).
  it('is cut into whole sentences: none ends at "Mr.", "Mrs." or an initial, none begins in lower case', { timeout: 600_000 }, () => {
    const all = chunks.flatMap((c) => sentences(text.slice(c.start, c.end)));
    expect(all.length).toBeGreaterThan(5000);
    expect(all.filter((s) => CUT_AT_ABBREVIATION.test(s))).toEqual([]);
    // Within a chunk (a chunk may begin at a quotation's "said she").
    expect(chunks.flatMap((c) => sentences(text.slice(c.start, c.end)).slice(1)).filter((s) => /^\p{Ll}/u.test(s))).toEqual([]);
    expect(all.find((s) => s.includes('a report soon followed that Mr.'))).toMatch(/Mr\. Bingley was to bring twelve ladies[\s\S]*assembly\.$/);
  });

  it('"Who is Mr. Darcy?" with the extractive engine: whole sentences in the memory, the answer and its sources', { timeout: 600_000 }, async () => {
    const question = 'Who is Mr. Darcy?';
    const memories: string[] = [];
    let answer = '';
    for await (const e of memoryLoop({
      text,
      chunks,
      question,
      generator: new ExtractiveEngine(tok),
      templates: DEFAULT_TEMPLATES,
      memoryTokens: 1024,
      sampling: { temperature: 0, topP: 1 },
    })) {
      if (e.kind === 'answer') answer = e.answer;
      else memories.push(e.memory);
    }
    // A sentence of a section (no chunk ends inside a sentence it keeps whole).
    const whole = new Set(chunks.flatMap((c) => sentences(text.slice(c.start, c.end)).map((s) => s.replace(/\s+/g, ' '))));
    // Every line of every memory is a whole sentence.
    for (const memory of memories)
      for (const line of memory.split('\n')) {
        expect(whole, line).toContain(line);
        expect(line).not.toMatch(CUT_AT_ABBREVIATION);
      }
    const last = memories.at(-1)!;
    expect(last).toContain('Mr. Darcy');
    // The answer is made of the memory's lines, whole.
    expect(answer.length).toBeGreaterThan(0);
    let rest = answer;
    for (const line of last.split('\n')) rest = rest.replace(line, '');
    expect(rest.trim()).toBe('');
    // Each source is a whole sentence of the book.
    const sources = await new Tracer({
      question,
      memories,
      section: (r) => ({ text: text.slice(chunks[r]!.start, chunks[r]!.end), start: chunks[r]!.start }),
    }).citeAnswer(answer);
    const cited = sources.citations.flatMap((c) => (c.sentence ? [c.sentence.text] : []));
    expect(cited.length).toBeGreaterThan(0);
    for (const s of cited) expect(whole, s).toContain(s.replace(/\s+/g, ' '));
    expect(cited.filter((s) => CUT_AT_ABBREVIATION.test(s))).toEqual([]);
  });
});
