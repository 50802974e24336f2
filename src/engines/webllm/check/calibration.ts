import type { SpeedMeasurement } from '../../../core/estimate';
import type { ChatMessage, GenerateResult } from '../../../core/generation';
import type { Tokenizer } from '../../../core/tokenizer';

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

/** When a request was sent, when its first text came and when it ended (ms), and how many text pieces streamed. */
export interface StreamTiming {
  sentAt: number;
  firstTokenAt?: number;
  endedAt: number;
  pieces: number;
}

/**
 * A calibration request's speeds: WebLLM's own prefill and decode speeds where
 * it reports them, else the stream as timed. `countedPrompt` stands in where
 * WebLLM reports no prompt size.
 */
export function speedOfStream(result: GenerateResult, timing: StreamTiming, countedPrompt: number): SpeedMeasurement {
  const { completionTokens, prefillTokensPerSecond, decodeTokensPerSecond } = result.usage;
  const promptTokens = result.usage.promptTokens || countedPrompt;
  if (prefillTokensPerSecond && decodeTokensPerSecond && prefillTokensPerSecond > 0 && decodeTokensPerSecond > 0) {
    return { prefillTokensPerSecond, decodeTokensPerSecond, promptTokens, completionTokens, source: 'reported' };
  }
  // Timed here: the prompt is read before the first token; each later token is one decode step.
  const written = completionTokens || timing.pieces;
  const first = timing.firstTokenAt;
  if (first === undefined || !promptTokens || written < 2 || first <= timing.sentAt || timing.endedAt <= first) {
    throw new Error('The calibration request returned too little to time.');
  }
  return {
    prefillTokensPerSecond: promptTokens / ((first - timing.sentAt) / 1000),
    decodeTokensPerSecond: (written - 1) / ((timing.endedAt - first) / 1000),
    promptTokens,
    completionTokens: written,
    source: 'timed',
  };
}
