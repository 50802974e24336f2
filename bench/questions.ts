/**
 * Several questions about one book: read one after another (a full read each)
 * against read together (one StepBatcher over their loops, as `memagent read`
 * with several questions does), for 1, 2 and 4 questions. With the extractive
 * engine the steps take turns, so together should cost what one after another
 * does; on a server that batches, one forward pass serves every request in
 * flight, so together should be faster.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { StepBatcher } from '../src/core/batch';
import { chunkAll, type ChunkSpan } from '../src/core/chunker';
import { type TextGenerator, withOwnTuner } from '../src/core/generation';
import { memoryLoop } from '../src/core/loop';
import { DEFAULT_TEMPLATES } from '../src/core/prompts';
import type { Tokenizer } from '../src/core/tokenizer';
import { batchSender } from '../src/engines/batch-sender';
import type { Engine } from '../src/engines/engine';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { createOpenAIEngine } from '../src/engines/openai/engine';
import { loadQwenTokenizer } from '../src/engines/qwen-tokenizer';
import { startOpenAIServer } from '../test/support/openai-server';

const CORPUS = new URL('../../shared/corpus/frankenstein.txt', import.meta.url);
const QUESTIONS = [
  'What does Victor feel about the creature in this part of the story?',
  'Where does Victor travel, and why?',
  'Who is Elizabeth, and what does she write to Victor?',
  'What happens to Justine?',
];
const COUNTS = [1, 2, 4];
/** A forward pass of the test server: a fixed cost, and a smaller one for each request in it. */
const PASS_MS = 2;
const PER_REQUEST_MS = 0.25;

interface Book {
  text: string;
  chunks: ChunkSpan[];
  memoryTokens: number;
}

/** One question's read; its answer. */
async function read(book: Book, question: string, generator: TextGenerator): Promise<string> {
  let answer = '';
  for await (const event of memoryLoop({
    text: book.text,
    chunks: book.chunks,
    question,
    generator: withOwnTuner(generator),
    templates: DEFAULT_TEMPLATES,
    memoryTokens: book.memoryTokens,
    sampling: { temperature: 0.7, topP: 0.95 },
  })) {
    if (event.kind === 'answer') answer = event.answer || event.reply;
  }
  return answer;
}

async function oneAfterAnother(engine: Engine, book: Book, questions: readonly string[]): Promise<string[]> {
  const answers: string[] = [];
  for (const q of questions) answers.push(await read(book, q, engine));
  return answers;
}

async function together(engine: Engine, book: Book, questions: readonly string[]): Promise<string[]> {
  const batcher = new StepBatcher(batchSender(engine));
  return Promise.all(
    questions.map(async (q) => {
      const member = batcher.join();
      try {
        return await read(book, q, member);
      } finally {
        // Its last step is written: the others no longer wait for it.
        member.leave();
      }
    }),
  );
}

/**
 * Reads N questions both ways, `rounds` times in alternating order, and checks
 * that each question gets the same answer every time. The fastest round of each
 * way counts: other work on the machine only ever adds time.
 */
async function compare(engine: Engine, book: Book, n: number, rounds: number, counted?: BatchingServer) {
  const questions = QUESTIONS.slice(0, n);
  const ways = { apart: oneAfterAnother, joint: together };
  const best = { apart: { s: Infinity, perPass: 0 }, joint: { s: Infinity, perPass: 0 } };
  let expected: string[] | undefined;
  for (let round = 0; round < rounds; round++) {
    for (const way of round % 2 ? (['joint', 'apart'] as const) : (['apart', 'joint'] as const)) {
      counted?.resetCounts();
      const t0 = performance.now();
      const answers = await ways[way](engine, book, questions);
      const s = (performance.now() - t0) / 1000;
      if (s < best[way].s) best[way] = { s, perPass: counted?.requestsPerPass ?? 0 };
      const first = (expected ??= answers);
      answers.forEach((answer, i) => {
        if (answer !== first[i])
          throw new Error(`Question ${i + 1} of ${n}: answered "${answer}" ${way === 'joint' ? 'read together' : 'read alone'}, "${first[i]}" before.`);
      });
    }
  }
  const perPass = (m: number) => (counted ? `  ${m.toFixed(2)} requests/pass` : '');
  const { apart, joint } = best;
  console.log(
    `  ${n} question${n > 1 ? 's' : ' '}  one after another ${apart.s.toFixed(2).padStart(5)} s${perPass(apart.perPass)}  ` +
      `together ${joint.s.toFixed(2).padStart(5)} s${perPass(joint.perPass)}  ${(apart.s / joint.s).toFixed(2)}x`,
  );
}

/**
 * An OpenAI-compatible server that batches as vLLM does, in front of the test
 * server (which writes the replies, at once): every request in flight is in
 * each forward pass, which writes one token for each of them and takes
 * PASS_MS + PER_REQUEST_MS per request, so requests in flight together share
 * the passes that one after another they would each pay for.
 */
class BatchingServer {
  private readonly active = new Set<Stream>();
  private server: Server | null = null;
  private passing = false;
  private passes = 0;
  private requestsInPasses = 0;
  url = '';

  constructor(
    private readonly upstream: string,
    private readonly tokenizer: Tokenizer,
  ) {}

  get requestsPerPass(): number {
    return this.passes ? this.requestsInPasses / this.passes : 0;
  }

  resetCounts(): void {
    this.passes = 0;
    this.requestsInPasses = 0;
  }

  async start(): Promise<this> {
    const server = createServer((req, res) => void this.handle(req, res).catch(() => res.destroy()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
    this.server = server;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    const body = parts.length ? Buffer.concat(parts) : undefined;
    const reply = await fetch(this.upstream + (req.url ?? ''), { method: req.method, headers: { 'Content-Type': 'application/json' }, body });
    const type = reply.headers.get('content-type') ?? '';
    const text = await reply.text();
    res.writeHead(reply.status, { 'Content-Type': type });
    if (!type.includes('text/event-stream')) return void res.end(text);
    // The stream's events, each written once the passes have written its tokens.
    const events = text
      .split('\n\n')
      .filter(Boolean)
      .map((e) => ({ data: `${e}\n\n`, tokens: this.tokens(e) }));
    const stream: Stream = { res, events, credit: 0 };
    this.release(stream);
    if (stream.events.length) {
      this.active.add(stream);
      if (!this.passing) void this.pass();
    }
  }

  /** The tokens a streamed event's content took to write. */
  private tokens(event: string): number {
    const data = event.replace(/^data: /, '');
    if (data === '[DONE]') return 0;
    const json = JSON.parse(data) as { choices?: { delta?: { content?: string } }[] };
    return this.tokenizer.count(json.choices?.[0]?.delta?.content ?? '');
  }

  /** Writes the events whose tokens are written; ends the reply after its last. */
  private release(stream: Stream): void {
    while (stream.events.length && stream.events[0]!.tokens <= stream.credit) {
      const e = stream.events.shift()!;
      stream.credit -= e.tokens;
      stream.res.write(e.data);
    }
    if (!stream.events.length) {
      stream.res.end();
      this.active.delete(stream);
    }
  }

  /** The forward passes, one after another while any request is in flight; one joining mid-pass waits for the next. */
  private async pass(): Promise<void> {
    this.passing = true;
    // Paced against the clock, so that timer granularity does not add up over many passes.
    let due = performance.now();
    while (this.active.size) {
      const batch = [...this.active];
      const cost = PASS_MS + PER_REQUEST_MS * batch.length;
      due = Math.max(due, performance.now() - cost) + cost;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      this.passes++;
      this.requestsInPasses += batch.length;
      for (const s of batch) {
        s.credit++;
        this.release(s);
      }
    }
    this.passing = false;
  }
}

interface Stream {
  res: ServerResponse;
  events: { data: string; tokens: number }[];
  /** Tokens written by the passes and not yet sent. */
  credit: number;
}

export async function questionsBench(): Promise<void> {
  const corpus = readFileSync(CORPUS, 'utf8').replace(/\r\n?/g, '\n').normalize('NFC');
  const tokenizer = await loadQwenTokenizer();

  const extractive = new ExtractiveEngine(tokenizer);
  const long = corpus.slice(100_000, 150_000);
  const longBook: Book = { text: long, chunks: chunkAll(long, tokenizer, 2000), memoryTokens: 256 };
  await oneAfterAnother(extractive, longBook, QUESTIONS); // warm the tokenizer's caches and the JIT, so that the first case is not the slowest
  console.log(
    `Several questions, extractive engine (steps in turns): ${longBook.chunks.length} chunks of 2,000 tokens, memory ${longBook.memoryTokens} tokens`,
  );
  for (const n of COUNTS) await compare(extractive, longBook, n, 3);

  const upstream = await startOpenAIServer();
  const server = await new BatchingServer(upstream.url.replace(/\/v1$/, ''), tokenizer).start();
  try {
    const engine = await createOpenAIEngine({ baseUrl: server.url }, tokenizer);
    const short = corpus.slice(100_000, 112_000);
    const book: Book = { text: short, chunks: chunkAll(short, tokenizer, 1000), memoryTokens: 32 };
    await read(book, QUESTIONS[0]!, engine); // warm the connection
    console.log();
    console.log(
      `Several questions, OpenAI-compatible server (requests in flight together): test server batching like vLLM, ` +
        `a forward pass ${PASS_MS} ms + ${PER_REQUEST_MS} ms per request in it; ${book.chunks.length} chunks of 1,000 tokens, memory ${book.memoryTokens} tokens`,
    );
    for (const n of COUNTS) await compare(engine, book, n, 2, server);
  } finally {
    await server.stop();
    await upstream.stop();
  }
}
