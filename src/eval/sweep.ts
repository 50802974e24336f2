import { extractAnswer } from '../core/answer';
import { chunkAll } from '../core/chunker';
import { abortError, isAbortError, type TextGenerator, withOwnTuner } from '../core/generation';
import { memoryLoop } from '../core/loop';
import { DEFAULT_READ_SETTINGS, planRead, type ReadSettings } from '../core/plan';
import { DEFAULT_TEMPLATES, type PromptTemplates, renderTemplate, templateOverhead } from '../core/prompts';
import type { Tokenizer } from '../core/tokenizer';
import type { Haystack } from './haystack';
import type { EvalMethod } from './infmem-read';
import { hashSeed } from './rng';
import { type Scores, scoreAnswer } from './score';
import { generateSample, type TaskId } from './tasks';
import { readTogether, type Together } from './together';

/** "memory": the MemAgent loop; "full": the whole document in one prompt, for engines whose window holds it. */
export type ReadingMode = 'memory' | 'full';

/** A sweep: what is generated, and the read settings every sample is read with. */
export interface SweepSpec extends Omit<ReadSettings, 'seed'> {
  tasks: TaskId[];
  /** Target document lengths in tokens. */
  lengths: number[];
  /** Samples per task × length cell. */
  samples: number;
  /** The sweep's seed: each sample's own sampling seed is derived from it. */
  seed: number;
  mode: ReadingMode;
  templates: PromptTemplates;
  /** The methods that read every sample, in turn (MemAgent's alone where absent); InfMem goes with memory mode only. */
  methods?: EvalMethod[];
  /** InfMem's stop votes in a row that end a read (3 where absent). */
  earlyStop?: number;
  /** InfMem's two-stage thinking for a model's calls (on where absent, as the official runs). */
  thinking?: boolean;
}

/** A spec with the paper's settings wherever none is given. */
export function sweepSpec(spec: Partial<SweepSpec> & Pick<SweepSpec, 'tasks' | 'lengths'>): SweepSpec {
  return {
    samples: 5,
    seed: 0,
    mode: 'memory',
    ...DEFAULT_READ_SETTINGS,
    templates: { ...DEFAULT_TEMPLATES },
    ...spec,
  };
}

/**
 * The direct-reading baseline's prompt: the whole document as one section.
 * Same tags and answer format as the memory prompts, so the two modes differ
 * only in how the document reaches the model.
 */
export const FULL_CONTEXT_TEMPLATE = `You are given a problem and a long article that contains what is needed to solve it. Read the article and solve the problem. Give your final answer inside \\boxed{}.

<problem>
{problem}
</problem>

<section>
{section}
</section>

Your answer:
`;

export interface PlannedSample {
  /** Position in the sweep: results are stored and resumed by it. */
  ordinal: number;
  task: TaskId;
  length: number;
  /** Sample number within its cell, from 0. */
  index: number;
  /** The sample's own seed, derived from the sweep's: a sample is the same whenever it is made. */
  seed: number;
}

/** Every sample of a sweep in reading order: shorter lengths first, so the table fills from the left. */
export function planSweep(spec: SweepSpec): PlannedSample[] {
  const out: PlannedSample[] = [];
  for (const length of [...spec.lengths].sort((a, b) => a - b)) {
    for (const task of spec.tasks) {
      for (let index = 0; index < spec.samples; index++) {
        out.push({ ordinal: out.length, task, length, index, seed: hashSeed(`${spec.seed}/${task}/${length}/${index}`) });
      }
    }
  }
  return out;
}

export interface SampleResult {
  /** The method that read it; MemAgent's where absent (reports made before InfMem). */
  method?: EvalMethod;
  ordinal: number;
  task: TaskId;
  length: number;
  index: number;
  seed: number;
  documentTokens: number;
  question: string;
  references: string[];
  reply: string;
  answer: string;
  /** Null when the sample could not be read (see `skipped` and `failed`). */
  scores: Scores | null;
  /** Why the document was not read: too long for the engine's window (full mode). */
  skipped?: string;
  /** Why reading failed: a request of this sample failed (after the engine's retries) while the others read on. */
  failed?: string;
  /** Requests that read the document: chunks in memory mode, 1 in full mode (InfMem: the document's chunks). */
  chunks: number;
  /** Chunks read into the memory: all of them for MemAgent, those before the planner stopped for InfMem. */
  chunksRead?: number;
  /** Calls the engine answered, the final answer's included. */
  requests?: number;
  /** Time of those requests together. */
  chunkMs: number;
  /** Time of the final answer request (memory mode; 0 in full mode). */
  answerMs: number;
  /** Time to generate the document. */
  generateMs: number;
  promptTokens: number;
  completionTokens: number;
}

export interface SweepContext {
  generator: TextGenerator;
  tokenizer: Tokenizer;
  /** Tokens one request may hold: decides whether full mode can read a document. */
  contextWindow: number;
  /** The "essay" haystack. */
  essay: Haystack;
  signal?: AbortSignal;
  now?: () => number;
  /** After each reading step of a sample: for progress within long samples. */
  onStep?(step: { ordinal: number; chunk: number; chunks: number }): void;
  /** Reads up to `size` samples together, their steps written in one batch by `send` (see readTogether); one at a time without. */
  together?: Together;
  /**
   * Whether a failed request means the engine itself cannot go on (a lost
   * GPU, an unreachable server): that ends the sweep. Any other failure
   * fails its sample alone, the reason on its row. Without it, every failure
   * fails its sample alone.
   */
  fatal?(error: unknown): boolean;
}

/** Enough for any question the generators ask: steps are planned and batches sized with it before the questions are made. */
export const QUESTION_TOKENS_BOUND = 96;

/**
 * The most tokens one request of the sweep holds: in memory mode one step
 * (the update template, a question, the chunk, the memory and the reply, as
 * the read plans it); in full mode the longest document with its prompt and
 * reply, at most the window. Batches are sized at this, not the whole window.
 */
export function sweepStepTokens(spec: SweepSpec, room: { contextWindow: number; count(text: string): number }): number {
  if (spec.mode === 'full') {
    const longest = Math.max(0, ...spec.lengths);
    const need = templateOverhead(FULL_CONTEXT_TEMPLATE, room.count) + QUESTION_TOKENS_BOUND + longest + spec.memoryTokens;
    return Math.min(room.contextWindow, need);
  }
  return planRead(spec, { ...room, updateTemplate: spec.templates.update, questionTokens: QUESTION_TOKENS_BOUND }).contextTokens;
}

/** Generates one sample, reads it in the spec's mode and scores the answer. */
export async function runSample(spec: SweepSpec, planned: PlannedSample, ctx: SweepContext): Promise<SampleResult> {
  const now = ctx.now ?? (() => performance.now());
  if (ctx.signal?.aborted) throw abortError();
  const t0 = now();
  const sample = generateSample(planned.task, {
    seed: planned.seed,
    tokens: planned.length,
    tokenizer: ctx.tokenizer,
    essay: ctx.essay,
  });
  const base = {
    ...planned,
    documentTokens: sample.tokens,
    question: sample.question,
    references: sample.references,
    generateMs: now() - t0,
  };
  let read: Reading;
  try {
    read = spec.mode === 'full' ? await readFull(spec, planned, ctx, sample) : await readWithMemory(spec, planned, ctx, sample);
  } catch (e) {
    if (isAbortError(e) || ctx.signal?.aborted) throw abortError();
    if (ctx.fatal?.(e)) throw e;
    read = { failed: e instanceof Error ? e.message : String(e) };
  }
  if ('skipped' in read || 'failed' in read) {
    const none = { chunks: 0, chunksRead: 0, requests: 0, chunkMs: 0, answerMs: 0, promptTokens: 0, completionTokens: 0 };
    return { ...base, method: 'memagent', reply: '', answer: '', scores: null, ...read, ...none };
  }
  // Memory mode: a request a chunk and one for the answer; full mode: the one request.
  const requests = spec.mode === 'full' ? 1 : read.chunks + 1;
  return { ...base, method: 'memagent', ...read, chunksRead: read.chunks, requests, scores: scoreAnswer(sample.metric, read.answer, sample.references) };
}

type Reading =
  Pick<SampleResult, 'reply' | 'answer' | 'chunks' | 'chunkMs' | 'answerMs' | 'promptTokens' | 'completionTokens'> | { skipped: string } | { failed: string };

interface Generated {
  document: string;
  tokens: number;
  question: string;
}

async function readWithMemory(spec: SweepSpec, planned: PlannedSample, ctx: SweepContext, sample: Generated): Promise<Reading> {
  const count = (s: string) => ctx.tokenizer.count(s);
  const budget = planRead(spec, { contextWindow: ctx.contextWindow, count, updateTemplate: spec.templates.update, questionTokens: count(sample.question) });
  const chunks = chunkAll(sample.document, ctx.tokenizer, budget.chunkTokens);
  const out = { reply: '', answer: '', chunks: chunks.length, chunkMs: 0, answerMs: 0, promptTokens: 0, completionTokens: 0 };
  const loop = memoryLoop({
    text: sample.document,
    chunks,
    question: sample.question,
    generator: withOwnTuner(ctx.generator),
    templates: spec.templates,
    memoryTokens: budget.memoryTokens,
    sampling: { temperature: spec.temperature, topP: spec.topP, seed: planned.seed },
    signal: ctx.signal,
    now: ctx.now,
  });
  for await (const event of loop) {
    out.promptTokens += event.result.usage.promptTokens;
    out.completionTokens += event.result.usage.completionTokens;
    if (event.kind === 'revision') {
      out.chunkMs += event.ms;
      ctx.onStep?.({ ordinal: planned.ordinal, chunk: event.index + 1, chunks: chunks.length });
    } else {
      out.answerMs = event.ms;
      out.reply = event.reply;
      out.answer = event.answer;
    }
  }
  return out;
}

async function readFull(spec: SweepSpec, planned: PlannedSample, ctx: SweepContext, sample: Generated): Promise<Reading> {
  const count = (s: string) => ctx.tokenizer.count(s);
  // Counted from parts: the document's count is already known, and a megabyte prompt need not be encoded again.
  const promptTokens = templateOverhead(FULL_CONTEXT_TEMPLATE, count) + count(sample.question) + sample.tokens;
  if (promptTokens + spec.memoryTokens > ctx.contextWindow) {
    return {
      skipped: `The document needs ${promptTokens.toLocaleString('en')} prompt tokens; the engine holds ${ctx.contextWindow.toLocaleString('en')}.`,
    };
  }
  const prompt = renderTemplate(FULL_CONTEXT_TEMPLATE, { problem: sample.question, section: sample.document });
  const now = ctx.now ?? (() => performance.now());
  const t0 = now();
  const result = await ctx.generator.generate([{ role: 'user', content: prompt }], {
    maxTokens: spec.memoryTokens,
    temperature: spec.temperature,
    topP: spec.topP,
    seed: planned.seed,
    signal: ctx.signal,
  });
  if (ctx.signal?.aborted || result.finishReason === 'abort') throw abortError();
  ctx.onStep?.({ ordinal: planned.ordinal, chunk: 1, chunks: 1 });
  return {
    reply: result.text,
    answer: extractAnswer(result.text),
    chunks: 1,
    chunkMs: now() - t0,
    answerMs: 0,
    promptTokens: result.usage.promptTokens,
    completionTokens: result.usage.completionTokens,
  };
}

/**
 * Reads every planned sample not in `done`, yielding each result as it is
 * scored: in order one at a time, or with `ctx.together` up to its size at
 * once (each its own book and question), chunk by chunk together, each
 * yielded as it ends. A sample whose request fails is yielded with why
 * (`failed`) and the others read on; a stop, or a failure `ctx.fatal` names,
 * ends the sweep.
 */
export function runSweep(spec: SweepSpec, ctx: SweepContext, done: ReadonlySet<number> = new Set()): AsyncGenerator<SampleResult, void, void> {
  const todo = planSweep(spec).filter((p) => !done.has(p.ordinal));
  return readTogether(todo, ctx.together, (planned, generator) => runSample(spec, planned, generator ? { ...ctx, generator } : ctx));
}

/** One task × length cell of the results table. */
export interface CellSummary {
  task: TaskId;
  length: number;
  planned: number;
  /** Samples finished, scored or skipped. */
  finished: number;
  scored: number;
  /** Mean headline score in [0, 1]; null before any sample is scored. */
  accuracy: number | null;
  exactMatch: number | null;
  f1: number | null;
  meanChunkMs: number | null;
  /** Prompt and reply tokens the engine processed per second of generation. */
  tokensPerSecond: number | null;
  /** Samples too long for the engine (full mode). */
  skipped: number;
  /** Samples whose reading failed (see SampleResult.failed). */
  failed: number;
}

function mean(values: readonly number[]): number | null {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : null;
}

/** The results table: one row per task × length, in the spec's task order and ascending length. */
export function summarize(spec: Pick<SweepSpec, 'tasks' | 'lengths' | 'samples'>, results: readonly SampleResult[]): CellSummary[] {
  const rows: CellSummary[] = [];
  for (const task of spec.tasks) {
    for (const length of [...spec.lengths].sort((a, b) => a - b)) {
      const cell = results.filter((r) => r.task === task && r.length === length);
      const scored = cell.filter((r) => r.scores !== null);
      const chunks = scored.reduce((n, r) => n + r.chunks, 0);
      const ms = scored.reduce((n, r) => n + r.chunkMs + r.answerMs, 0);
      const tokens = scored.reduce((n, r) => n + r.promptTokens + r.completionTokens, 0);
      const optional = (pick: (s: Scores) => number | undefined) => {
        const v = scored.map((r) => pick(r.scores!)).filter((x): x is number => x !== undefined);
        return mean(v);
      };
      rows.push({
        task,
        length,
        planned: spec.samples,
        finished: cell.length,
        scored: scored.length,
        accuracy: mean(scored.map((r) => r.scores!.score)),
        exactMatch: optional((s) => s.exactMatch),
        f1: optional((s) => s.f1),
        meanChunkMs: chunks ? scored.reduce((n, r) => n + r.chunkMs, 0) / chunks : null,
        tokensPerSecond: ms > 0 ? (tokens * 1000) / ms : null,
        skipped: cell.filter((r) => r.skipped !== undefined).length,
        failed: cell.filter((r) => r.failed !== undefined).length,
      });
    }
  }
  return rows;
}
