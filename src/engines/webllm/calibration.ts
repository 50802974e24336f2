import type { ChatMessage } from '../../core/generation';
import type { Tokenizer } from '../../core/tokenizer';

/**
 * About a thousand prompt tokens, which with the chat template still fit one of
 * WebLLM's 1,024-token prefill passes, and a few dozen written: a few seconds on
 * a laptop GPU.
 */
export const CALIBRATION_PROMPT_TOKENS = 960;
export const CALIBRATION_REPLY_TOKENS = 48;

/** A plain prompt of about `tokens` tokens that asks for a long reply. */
export function calibrationMessages(tokenizer: Tokenizer, tokens = CALIBRATION_PROMPT_TOKENS): ChatMessage[] {
  const head = 'Here are some notes about the weather in a small town. Summarise them in a few sentences.\n\n';
  const line = (i: number) => `Day ${i}: the grass is green, the sky is blue, the sun is yellow, and the wind comes from the west.\n`;
  let content = head;
  // Lines end in a newline, so their counts add up to the whole one's (near enough).
  for (let i = 1, n = tokenizer.count(head); n < tokens; i++) {
    content += line(i);
    n += tokenizer.count(line(i));
  }
  return [{ role: 'user', content }];
}
