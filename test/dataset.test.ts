import { describe, expect, it } from 'vitest';
import { type DatasetItem, DatasetError, numDocsFromName, readDataset } from '../src/eval/dataset';

const ITEMS = [
  {
    context: '\n Document 1:\nBraces {like} these, "quotes" and [brackets]\n\nDocument 2:\nA back\\slash\u001c ',
    input: '  Which city? ',
    answers: ['Paris', 'City of Light'],
    num_docs: 2,
    _id: 'extra fields are ignored',
  },
  { context: 'Document 1:\nÉcole}]', input: 'Who?', answers: ['Marie'], num_docs: 2 },
];

const EXPECTED: DatasetItem[] = [
  {
    index: 0,
    context: 'Document 1:\nBraces {like} these, "quotes" and [brackets]\n\nDocument 2:\nA back\\slash',
    question: 'Which city?',
    answers: ['Paris', 'City of Light'],
    numDocs: 2,
  },
  { index: 1, context: 'Document 1:\nÉcole}]', question: 'Who?', answers: ['Marie'], numDocs: 2 },
];

async function read(text: string | string[], name = 'eval_2.json'): Promise<DatasetItem[]> {
  const out: DatasetItem[] = [];
  for await (const item of readDataset(typeof text === 'string' ? [text] : text, name)) out.push(item);
  return out;
}

/** The text cut into pieces of `size` characters, as a stream delivers it. */
function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

describe('RULER-HotpotQA files', () => {
  const list = JSON.stringify(ITEMS, null, 2);
  const lines = `${ITEMS.map((i) => JSON.stringify(i)).join('\r\n')}\r\n`;

  it('read a JSON list and JSON Lines alike, stripping context and question as the paper does', async () => {
    expect(await read(list)).toEqual(EXPECTED);
    expect(await read(lines)).toEqual(EXPECTED);
    expect(await read(`\uFEFF${list}`)).toEqual(EXPECTED);
  });

  it('read the same items however the text is cut into pieces', async () => {
    for (const size of [1, 2, 3, 7, 64]) {
      expect(await read(pieces(list, size)), `pieces of ${size}`).toEqual(EXPECTED);
      expect(await read(pieces(lines, size)), `pieces of ${size}`).toEqual(EXPECTED);
    }
  });

  it('take the document count from the file name when items lack it', async () => {
    const bare = ITEMS.map(({ num_docs: _, ...rest }) => rest);
    expect((await read(JSON.stringify(bare), 'eval_200.json')).map((i) => i.numDocs)).toEqual([200, 200]);
    expect((await read(JSON.stringify(bare), 'mine.jsonl')).map((i) => i.numDocs)).toEqual([null, null]);
    expect([numDocsFromName('data/eval_6400.json'), numDocsFromName('eval_50.jsonl'), numDocsFromName('hotpot.json')]).toEqual([6400, 50, null]);
  });

  it.each([
    ['"just text"', /line 1 has """ where an item/],
    ['[{"context": "a", "input": "b", "answers": ["c"]}', /ends before its list is closed/],
    ['{"context": "a", "input": "b", "answers": ["c"]}\n{"context": "a", "inp', /ends in the middle of an item \(line 2\)/],
    ['[{"context": "a", "answers": ["c"]}]', /item 1 \(line 1\) has no input/],
    ['[{"context": "a", "input": "b", "answers": []}]', /"answers" must be a list of at least one text/],
    ['[{"context": 5, "input": "b", "answers": ["c"]}]', /"context" must be text/],
    ['[{"context": "a", "input": "b", "answers": ["c"], "num_docs": "many"}]', /"num_docs" must be a whole number/],
    ['[{"context": "a", "input": "b", "answers": ["c"],}]', /item 1 \(line 1\) is not valid JSON/],
    ['[]', /holds no items/],
  ])('refuse %s, saying what is wrong', async (text, message) => {
    await expect(read(text)).rejects.toThrow(DatasetError);
    await expect(read(text)).rejects.toThrow(message);
  });
});
