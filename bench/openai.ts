/**
 * Reads in flight against an OpenAI-compatible server: one read at a time
 * against eight at once. The test server spends a fixed time per generated
 * token whatever else it is doing, as vLLM's continuous batching roughly does,
 * so concurrency should turn into throughput.
 */
import { readFileSync } from 'node:fs';
import { chunkAll } from '../src/core/chunker';
import { memoryLoop } from '../src/core/loop';
import { DEFAULT_TEMPLATES } from '../src/core/prompts';
import { createOpenAIEngine, type OpenAIEngine } from '../src/engines/openai/engine';
import { loadQwenTokenizer } from '../src/engines/qwen-tokenizer';
import { startOpenAIServer } from '../test/support/openai-server';

const CORPUS = new URL('../../shared/corpus/frankenstein.txt', import.meta.url);
const TOKEN_DELAY_MS = 4;
const CHUNK_TOKENS = 2000;
const MEMORY_TOKENS = 128;
const BOOK_CHARS = 20_000;

interface Totals {
  steps: number;
  tokens: number;
}

async function read(engine: OpenAIEngine, text: string, question: string): Promise<Totals> {
  const chunks = chunkAll(text, engine.tokenizer, CHUNK_TOKENS);
  const totals = { steps: 0, tokens: 0 };
  for await (const event of memoryLoop({
    text,
    chunks,
    question,
    generator: engine,
    templates: DEFAULT_TEMPLATES,
    memoryTokens: MEMORY_TOKENS,
    sampling: { temperature: 0.7, topP: 0.95 },
  })) {
    totals.steps++;
    totals.tokens += event.result.usage.promptTokens + event.result.usage.completionTokens;
  }
  return totals;
}

export async function openaiBench(): Promise<number> {
  const book = readFileSync(CORPUS, 'utf8').replace(/\r\n?/g, '\n').normalize('NFC');
  const server = await startOpenAIServer({ tokenDelayMs: TOKEN_DELAY_MS });
  try {
    const engine = await createOpenAIEngine({ baseUrl: server.url }, await loadQwenTokenizer());
    // Eight equal reads, so that the comparison measures concurrency, not which read happens to be the longest.
    const passage = book.slice(100_000, 100_000 + BOOK_CHARS);
    const books = Array.from({ length: 8 }, () => passage);
    const questions = Array.from({ length: 8 }, () => 'What does Victor feel about the creature in this part of the story?');
    await read(engine, passage.slice(0, 4000), questions[0]!); // warm the tokenizer and the connection

    // The same eight reads each time, taken off one queue by `inFlight` readers.
    const measure = async (inFlight: number) => {
      const queue = books.map((text, i) => ({ text, question: questions[i]! }));
      const results: Totals[] = [];
      const reader = async () => {
        for (let next = queue.shift(); next; next = queue.shift()) results.push(await read(engine, next.text, next.question));
      };
      const t0 = performance.now();
      await Promise.all(Array.from({ length: inFlight }, reader));
      const seconds = (performance.now() - t0) / 1000;
      const steps = results.reduce((n, r) => n + r.steps, 0);
      const tokens = results.reduce((n, r) => n + r.tokens, 0);
      return { inFlight, seconds, steps, tokens, rate: tokens / seconds };
    };
    const one = await measure(1);
    const eight = await measure(8);
    const ratio = eight.rate / one.rate;

    console.log(
      `OpenAI-compatible server: reads in flight (test server, ${TOKEN_DELAY_MS} ms per generated token, chunk ${CHUNK_TOKENS.toLocaleString('en')}, memory ${MEMORY_TOKENS} tokens)`,
    );
    for (const m of [one, eight]) {
      console.log(
        `  ${String(m.inFlight).padStart(2)} in flight  8 reads, ${m.steps} steps  ${m.seconds.toFixed(1).padStart(5)} s  ` +
          `${(m.steps / m.seconds).toFixed(1).padStart(5)} steps/s  ${Math.round(m.rate).toLocaleString('en').padStart(7)} tokens/s`,
      );
    }
    console.log(`  throughput ${ratio.toFixed(1)}x with 8 in flight (target: at least 6x; the server saw ${server.maxInFlight} at once)`);
    return ratio;
  } finally {
    await server.stop();
  }
}
