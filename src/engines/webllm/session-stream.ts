/**
 * A reply WebLLM streams, read to its end (chat pieces in `delta`, a raw
 * completion's in `text`) and reported as the engine reports a generation.
 */
import type { FinishReason, GenerateResult } from '../../core/generation';
import type { StreamTiming } from './check/calibration';
import type { StreamChunk } from './driver/mlc';
import { type WebLLMVersion, writtenTokens } from './versions';

/** A streamed reply read to its end: its text, how it ended and its usage, each piece passed to `onToken`. */
export async function readStream(
  chunks: AsyncIterable<StreamChunk>,
  timing: StreamTiming,
  onToken?: (delta: string) => void,
): Promise<{ text: string; finishReason: FinishReason; usage: StreamChunk['usage'] }> {
  let text = '';
  let finishReason: FinishReason = 'stop';
  let usage: StreamChunk['usage'];
  for await (const chunk of chunks) {
    const choice = chunk.choices[0];
    const delta = choice?.delta?.content ?? choice?.text;
    if (delta) {
      timing.firstTokenAt ??= performance.now();
      timing.pieces++;
      text += delta;
      onToken?.(delta);
    }
    if (choice?.finish_reason) finishReason = choice.finish_reason === 'length' ? 'length' : choice.finish_reason === 'abort' ? 'abort' : 'stop';
    if (chunk.usage) usage = chunk.usage;
  }
  return { text, finishReason, usage };
}

/** A read stream as the engine reports it. */
export function resultOf(read: Awaited<ReturnType<typeof readStream>>, webllm: WebLLMVersion): GenerateResult {
  const { usage } = read;
  const result: GenerateResult = {
    text: read.text,
    finishReason: read.finishReason,
    usage: { promptTokens: usage?.prompt_tokens ?? 0, completionTokens: usage ? writtenTokens(webllm, usage) : 0 },
  };
  const extra = usage?.extra;
  if (extra?.prefill_tokens_per_s !== undefined) result.usage.prefillTokensPerSecond = extra.prefill_tokens_per_s;
  if (extra?.decode_tokens_per_s !== undefined) result.usage.decodeTokensPerSecond = extra.decode_tokens_per_s;
  if (extra?.time_to_first_token_s !== undefined) result.usage.timeToFirstTokenSeconds = extra.time_to_first_token_s;
  return result;
}
