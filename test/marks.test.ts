import { describe, expect, it } from 'vitest';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer } from '../src/engines/qwen-tokenizer';
import { testRunner } from './runner-setup';

const marks = () =>
  performance
    .getEntriesByType('mark')
    .filter((m) => m.name.startsWith('memagent:'))
    .map((m) => m.name.slice('memagent:'.length));

describe('marks on the performance timeline', () => {
  it("keep an import's stages in order, and only the latest import's", async () => {
    const tok = await loadQwenTokenizer();
    const { library } = await testRunner(new ExtractiveEngine(tok), tok);
    const book = (words: string) => new File([`CHAPTER I\n\n${words}\n`.repeat(50)], 'book.txt');
    await library.ingestFile(book('The lighthouse keeper counted ships.'), 'extractive');
    await library.ingestFile(book('The miller ground the winter wheat.'), 'extractive');
    expect(marks().filter((m) => m.startsWith('import-'))).toEqual(['import-file', 'import-bytes', 'import-read', 'import-counted', 'import-usable']);
  });
});
