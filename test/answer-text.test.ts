import { afterEach, describe, expect, it } from 'vitest';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer } from '../src/engines/qwen-tokenizer';
import { answerText } from '../src/ui/answer-text';
import { i18n } from '../src/ui/i18n';

afterEach(async () => {
  await i18n.changeLanguage('en');
});

describe('an answer as the page shows it', () => {
  it("shows the extractive engine's stored line for nothing found in the page's language", async () => {
    const engine = new ExtractiveEngine(await loadQwenTokenizer());
    const prompt = 'Answer from the memory.\n<problem>\nWhat is the vault code?\n</problem>\n<memory>\nThe weather was fine.\n</memory>\nThe answer is';
    const { text } = await engine.generate([{ role: 'user', content: prompt }], { maxTokens: 64 });
    await i18n.changeLanguage('zh-CN');
    expect(answerText(text)).toBe('记忆中没有能回答这个问题的内容。');
    await i18n.changeLanguage('en');
    expect(answerText(text)).toBe(text);
  });

  it('shows any other answer as written', async () => {
    await i18n.changeLanguage('zh-CN');
    expect(answerText('From the memory, the answer is 4417.')).toBe('From the memory, the answer is 4417.');
  });
});
