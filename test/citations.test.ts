import { describe, expect, it } from 'vitest';
import { keysOf, normalizeNumbers } from '../src/core/citations/keys';
import { splitNotes } from '../src/core/citations/notes';
import type { Sources, TraceInput } from '../src/core/citations/citation';
import { Tracer } from '../src/core/citations/trace';
import { NO_ANSWER_REPLY } from '../src/core/prompts';
import { formatSources } from '../src/cli/sources';
import { buildExport, toMarkdown } from '../src/storage/export';
import { RUN_ANSWER, type RunRecord } from '../src/storage/db';

/** A run in miniature: the sections it read (joined as its book) and the memory after each. */
function run(question: string, steps: readonly { section: string; memory: string }[], withBook = true): TraceInput & { book: string } {
  const starts: number[] = [];
  let at = 0;
  for (const s of steps) {
    starts.push(at);
    at += s.section.length + 2;
  }
  return {
    question,
    book: steps.map((s) => s.section).join('\n\n'),
    memories: steps.map((s) => s.memory),
    section: (r) => (withBook && steps[r] ? { text: steps[r].section, start: starts[r]! } : undefined),
  };
}

const FILLER = [
  'The morning was grey and the harbour lay still under a low sky.',
  'Fishermen mended their nets on the quay while gulls argued overhead.',
  'A cart rattled past the chandlery, loaded with barrels of salted cod.',
  'Nobody in the town could remember a winter as mild as this one.',
  'The bell of the old church rang the hour, and the market slowly emptied.',
];
/** A section of ordinary prose, with `planted` among its sentences if given. */
function prose(seed: number, planted?: string): string {
  const out = FILLER.map((_, i) => FILLER[(i + seed) % FILLER.length]!);
  if (planted) out.splice(2, 0, planted);
  return out.join(' ');
}

/** Revision numbers (from 0) and cited sentences, in order. */
function cited(s: Sources): { revision: number; sentence?: string }[] {
  return s.citations.map((c) => ({ revision: c.revision, ...(c.sentence && { sentence: c.sentence.text }) }));
}

describe('citation keys', () => {
  it('writes numbers and dates one way however the text wrote them', () => {
    expect(keysOf('It cost 1,000 crowns.')).toEqual(keysOf('It cost 1000 crowns.'));
    const date = new Set(keysOf('on 12 March 1815'));
    for (const other of ['on March 12, 1815', 'on March 12th, 1815', 'on 1815-03-12', 'on the twelfth of March 1815', 'on 12 Mar. 1815'])
      expect(new Set(keysOf(other))).toEqual(date);
    expect(keysOf('twenty-five ships and one hundred and five men')).toEqual(['25', 'ship', '105', 'men']);
    expect(keysOf('3 thousand sheep')).toEqual(['3000', 'sheep']);
    expect(normalizeNumbers('1815年3月12日')).toContain('12 march 1815');
  });

  it('folds plurals, possessives and the endings -ed and -ing, and drops stopwords', () => {
    expect(keysOf("The cities' lamps and Ortiz's maps")).toEqual(['city', 'lamp', 'ortiz', 'map']);
    expect(keysOf('guarded boxes, married')).toEqual(keysOf('guarding box, marry'));
  });

  it('reads Chinese as pairs of characters, with its numbers as numbers', () => {
    expect(keysOf('李明出生于1815年3月12日')).toEqual(expect.arrayContaining(['李明', '明出', '12', 'march', '1815']));
  });

  it('splits a memory into its lines, sentences and clauses that are facts of their own, with their places', () => {
    const memory =
      '- The warden is Orrin Vale. He was born in Port Meridian.\n2) Front door key: under the mat; spare key in the garden shed\n“You have travelled; you have spent years at Ingolstadt.”';
    const notes = splitNotes(memory);
    expect(notes.map((n) => n.text)).toEqual([
      'The warden is Orrin Vale.',
      'He was born in Port Meridian.',
      'Front door key: under the mat',
      'spare key in the garden shed',
      '“You have travelled; you have spent years at Ingolstadt.”',
    ]);
    for (const n of notes) expect(memory.slice(n.start, n.end)).toBe(n.text);
  });
});

describe('tracing an answer through the memory', () => {
  it('finds a rephrased fact by its content words and names, at the revision that wrote it down', async () => {
    const fact = 'Orrin Vale was born in Port Meridian in the year the harbour froze.';
    const input = run('Where was Orrin Vale born?', [
      { section: prose(0), memory: 'Nothing yet about Orrin Vale.' },
      { section: prose(1, fact), memory: '- Vale, Orrin: birthplace Port Meridian (harbour froze that year)' },
      { section: prose(2), memory: '- Vale, Orrin: birthplace Port Meridian (harbour froze that year)' },
    ]);
    const sources = await new Tracer(input).citeAnswer('Port Meridian');
    expect(cited(sources)).toEqual([{ revision: 1, sentence: fact }]);
    const c = sources.citations[0]!;
    expect(input.book.slice(c.sentence!.start, c.sentence!.end)).toBe(fact);
    expect(c.keptUntil).toBe(2);
    expect(sources.unsourced).toEqual([]);
  });

  it('cites where a fact that left the memory came back from, or where it first came from when it came back without a section', async () => {
    const fact = 'The brass key to the lighthouse hangs behind the Ferrand portrait.';
    const note = 'Lighthouse key: behind the Ferrand portrait.';
    const steps = (again: boolean) => [
      { section: prose(0), memory: 'No previous memory' },
      { section: prose(1, fact), memory: note },
      { section: prose(2), memory: 'The quay was busy.' },
      { section: prose(3, again ? 'Behind the Ferrand portrait, as ever, hung the brass key to the lighthouse.' : undefined), memory: note },
      { section: prose(4), memory: note },
    ];
    const back = await new Tracer(run('Where is the lighthouse key?', steps(true))).citeAnswer('Behind the Ferrand portrait.');
    expect(cited(back)).toEqual([{ revision: 3, sentence: 'Behind the Ferrand portrait, as ever, hung the brass key to the lighthouse.' }]);
    expect(back.citations[0]!.returned).toBeUndefined();
    const restored = await new Tracer(run('Where is the lighthouse key?', steps(false))).citeAnswer('Behind the Ferrand portrait.');
    expect(cited(restored)).toEqual([{ revision: 1, sentence: fact }]);
    expect(restored.citations[0]!.returned).toBe(true);
  });

  it('gives an answer that combines facts from several chunks one citation per fact', async () => {
    const born = 'Adela Marsh was born on 12 March 1815 in the village of Cray.';
    const wed = 'In 1840 Adela Marsh married the surveyor Tobias Wren.';
    const notes1 = '- Adela Marsh: born March 12, 1815, village of Cray';
    const notes2 = `${notes1}\n- Adela Marsh wed Tobias Wren (a surveyor) in 1840`;
    const input = run('When was Adela Marsh born, and whom did she marry?', [
      { section: prose(0), memory: 'No previous memory' },
      { section: prose(1, born), memory: notes1 },
      { section: prose(2), memory: notes1 },
      { section: prose(3, wed), memory: notes2 },
      { section: prose(4), memory: notes2 },
    ]);
    const sources = await new Tracer(input).citeAnswer('Adela Marsh was born on 12 March 1815 and married Tobias Wren in 1840.');
    expect(cited(sources)).toEqual([
      { revision: 1, sentence: born },
      { revision: 3, sentence: wed },
    ]);
  });

  it('matches numbers written differently in the book, the memory and the answer', async () => {
    const fact = 'The guild paid 1,250,000 florins for the bridge on March 12, 1815.';
    const input = run('What did the guild pay for the bridge, and when?', [
      { section: prose(0), memory: 'No previous memory' },
      { section: prose(1, fact), memory: 'Bridge: guild paid 1250000 florins, 12 March 1815.' },
      { section: prose(2), memory: 'Bridge: guild paid 1250000 florins, 12 March 1815.' },
    ]);
    expect(cited(await new Tracer(input).citeAnswer('1.25 million florins — 1,250,000 — on 1815-03-12'))).toEqual([{ revision: 1, sentence: fact }]);
  });

  it('traces Chinese text', async () => {
    const fact = '李明出生于1815年3月12日，后来在南港当灯塔看守。';
    const input = run('李明在哪里当灯塔看守？', [
      { section: '清晨的港口很安静。渔民们在码头上补网。', memory: '暂无相关信息。' },
      { section: `海鸥在头顶争吵。${fact}集市慢慢散了。`, memory: '李明：生于1815年3月12日，在南港做灯塔看守。' },
      { section: '钟声响了，天色渐暗。', memory: '李明：生于1815年3月12日，在南港做灯塔看守。' },
    ]);
    const sources = await new Tracer(input).citeAnswer('南港');
    expect(cited(sources)).toEqual([{ revision: 1, sentence: fact }]);
  });

  it('follows a two-part fact through the name that joins its parts, citing both', async () => {
    const warden = 'The warden of Gull Rock is Orrin Vale.';
    const birth = 'Orrin Vale was born in Port Meridian, far from the sea.';
    // Among notes that say "born" and "rock" of other people and places, as a book's would.
    const others = ['I was born at Naples.', 'Their eldest child was but just born.', 'She was born in freedom.', 'The rock overlooks the sea.'];
    const m1 = ['The warden of Gull Rock is Orrin Vale.', ...others].join('\n');
    const m2 = `${m1}\nOrrin Vale was born in Port Meridian.`;
    const input = run('Where was the warden of Gull Rock born?', [
      { section: prose(0), memory: 'Looking for the warden of Gull Rock and where the warden was born.' },
      { section: prose(1, warden), memory: m1 },
      { section: prose(2), memory: m1 },
      { section: prose(3, birth), memory: m2 },
      { section: prose(4), memory: m2 },
    ]);
    const tracer = new Tracer(input);
    for (const answer of ['Port Meridian', 'The warden of Gull Rock is Orrin Vale.']) {
      expect(cited(await tracer.citeAnswer(answer)), answer).toEqual([
        { revision: 1, sentence: warden },
        { revision: 3, sentence: birth },
      ]);
    }
  });

  it('follows a two-part fact joined by words rather than a name', async () => {
    const box = 'The brass key is hidden in the blue lacquer box.';
    const stairs = 'The blue lacquer box sits under the chapel stairs.';
    const notes = ['The sky was blue over the chapel.', 'A box of letters lay on the table.', box];
    const input = run('Where is the brass key?', [
      { section: prose(0, box), memory: notes.join('\n') },
      { section: prose(1, stairs), memory: [...notes, stairs].join('\n') },
    ]);
    expect(cited(await new Tracer(input).citeAnswer('Under the chapel stairs.'))).toEqual([
      { revision: 0, sentence: box },
      { revision: 1, sentence: stairs },
    ]);
  });

  it('follows a chain of three facts, each naming only the next', async () => {
    const hops = [
      'Captain Ilvesh gave a lantern to a sailor named Anna Dorrow.',
      'Dorrow later sold his prize to a trader called Ben Kastell.',
      'Kastell hid it beneath the old mill at Quennby.',
    ];
    const memories: string[] = [];
    const notes: string[] = [];
    const steps = [0, 1, 2, 3, 4, 5, 6].map((i) => {
      const hop = i % 2 === 1 ? hops[(i - 1) / 2] : undefined;
      if (hop) notes.push(hop);
      memories.push(notes.join('\n') || 'No previous memory');
      return { section: prose(i, hop), memory: memories[i]! };
    });
    const sources = await new Tracer(run('In which town did the lantern that Captain Ilvesh gave away end up hidden?', steps)).citeAnswer('Quennby');
    expect(cited(sources)).toEqual(hops.map((h, k) => ({ revision: 2 * k + 1, sentence: h })));
  });

  it('says "no source in the book" for a memory note no section supports, and for an answer the memory does not hold', async () => {
    const input = run('What is the capital of the northern province?', [
      { section: prose(0), memory: 'The capital of the northern province is Valdmark.' },
      { section: prose(1), memory: 'The capital of the northern province is Valdmark.' },
    ]);
    const tracer = new Tracer(input);
    expect(await tracer.citeAnswer('Valdmark')).toEqual({
      citations: [],
      unsourced: [{ text: 'The capital of the northern province is Valdmark.', reason: 'memory' }],
    });
    expect(await tracer.citeAnswer('Ostergaard, on the river Lune.')).toEqual({
      citations: [],
      unsourced: [{ text: 'Ostergaard, on the river Lune.', reason: 'answer' }],
    });
  });

  it('lists no sources for a reply that answers nothing, in the terminal or the Markdown export either', async () => {
    const input = run('What is the capital of the northern province?', [
      { section: prose(0), memory: 'The harbour lay still.' },
      { section: prose(1), memory: 'The harbour lay still.' },
    ]);
    const none = await new Tracer(input).citeAnswer(NO_ANSWER_REPLY);
    expect(none).toEqual({ citations: [], unsourced: [] });
    expect(formatSources({ ...none, citations: [] }, 2)).toBe('');
    const markdown = toMarkdown(
      buildExport({
        run: {
          id: 'r',
          question: input.question,
          documentId: 'd',
          engineId: 'extractive',
          status: 'done',
          answer: NO_ANSWER_REPLY,
          reply: NO_ANSWER_REPLY,
          nextChunk: 2,
          chunks: [],
          settings: { chunkTokens: 100, memoryTokens: 50 },
          createdAt: 0,
          updatedAt: 0,
        } as unknown as RunRecord,
        revisions: [],
        memories: [],
        sources: [{ runId: 'r', answer: RUN_ANSWER, memoryIndex: 1, citations: [], unsourced: none.unsourced, sections: true, tracedAt: 0 }],
      }),
    );
    expect(markdown).toContain(NO_ANSWER_REPLY);
    expect(markdown).not.toContain('Sources');
  });

  it('names the revision that wrote a fact down when the book is not at hand', async () => {
    const fact = 'The vault code for the Marlowe archive is 4829137.';
    const steps = [
      { section: prose(0), memory: 'No previous memory' },
      { section: prose(1), memory: 'No previous memory' },
      { section: prose(2, fact), memory: fact },
      { section: prose(3), memory: fact },
    ];
    expect(cited(await new Tracer(run('What is the vault code for the Marlowe archive?', steps, false)).citeAnswer('4829137'))).toEqual([{ revision: 2 }]);
  });

  it('traces every note of any revision’s memory', async () => {
    const a = 'Mira keeps the ledger of the salt works.';
    const b = 'The salt works closed in the winter of 1802.';
    const input = run('Who keeps the ledger?', [
      { section: prose(0, a), memory: 'Mira keeps the salt works ledger.' },
      { section: prose(1, b), memory: 'Mira keeps the salt works ledger.\nSalt works shut, winter 1802.\nThe moon is made of cheese.' },
    ]);
    const traces = await new Tracer(input).traceMemory(1);
    expect(traces.map((t) => [t.note.text, cited({ citations: t.citations, unsourced: [] })])).toEqual([
      ['Mira keeps the salt works ledger.', [{ revision: 0, sentence: a }]],
      ['Salt works shut, winter 1802.', [{ revision: 1, sentence: b }]],
      ['The moon is made of cheese.', []],
    ]);
  });
});
