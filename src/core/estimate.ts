/** A measured step: how long one memory update took and how long its prompt was. */
export interface StepSample {
  ms: number;
  promptTokens: number;
  /** Tokens the step wrote, where known. */
  completionTokens?: number;
  /** Speeds the engine reported for the step (WebLLM); absent for engines that report none. */
  prefillTokensPerSecond?: number;
  decodeTokensPerSecond?: number;
}

/** How fast a model reads a prompt (prefill) and writes (decode) on this device. */
export interface TokenSpeed {
  prefillTokensPerSecond: number;
  decodeTokensPerSecond: number;
}

/**
 * A model's speed measured apart from any read: a short prompt read and a few
 * tokens written, once per model and device, for estimates made before a read.
 */
export interface SpeedMeasurement extends TokenSpeed {
  promptTokens: number;
  completionTokens: number;
  /** The runtime's own figures, or the stream timed where it gave none. */
  source: 'reported' | 'timed';
}

/**
 * A model's speed measured on one device apart from any read (a WebLLM model
 * when it is loaded in Models, a llama.cpp model by its measure button): the
 * one record every engine keeps its measured speed in, for estimates made
 * before any read.
 */
export interface SpeedRecord extends SpeedMeasurement {
  /** The model, as `modelKey` names it from the engine config a read would use. */
  modelId: string;
  /**
   * Where it was measured: the GPU as WebGPU names it (vendor and
   * architecture), or the processor and thread count for a CPU engine.
   * Another device measures again.
   */
  adapter: string;
  measuredAt: number;
  /**
   * Whether speculative writing gave the same tokens as plain decoding with
   * this model on this device, checked once before it is used (WebLLM).
   */
  speculation?: SpeculationVerdict;
}

/** The outcome of the self-check (a greedy continuation written both ways, and sampling compared) with one model on one device. */
export interface SpeculationVerdict {
  /** `exact`: the same both ways, so speculation is used; `mismatch`: it stays off for this model. */
  verdict: 'exact' | 'mismatch';
  /** What was compared and found, in words (verdicts kept before this was recorded have none). */
  compared?: string;
  /** What the check ran on: a new WebLLM version or model library checks again. */
  webllm: string;
  library: string;
  checkedAt: number;
}

export interface RunEstimate {
  chunks: number;
  msPerChunk: number;
  totalMs: number;
}

/** The middle value (the upper one of an even count), or undefined for none. */
export function median(values: readonly number[]): number | undefined {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)] : undefined;
}

/**
 * Expected time of a run from this engine's measured steps: the median time
 * per prompt token, times the prompt this run's steps will have. Null without
 * measurements: no number is better than an invented one.
 */
export function estimateRun(chunks: number, promptTokensPerStep: number, samples: readonly StepSample[]): RunEstimate | null {
  const rate = median(samples.filter((s) => s.promptTokens > 0 && s.ms >= 0).map((s) => s.ms / s.promptTokens));
  if (rate === undefined || chunks <= 0) return null;
  const msPerChunk = rate * promptTokensPerStep;
  // One more step writes the answer.
  return { chunks, msPerChunk, totalMs: msPerChunk * (chunks + 1) };
}

/** Milliseconds of one step: its prompt read at the prefill speed, then what it writes at the decode speed. */
export function stepMs(promptTokens: number, writtenTokens: number, speed: TokenSpeed): number {
  return 1000 * (promptTokens / speed.prefillTokensPerSecond + writtenTokens / speed.decodeTokensPerSecond);
}

function usable(speed: TokenSpeed | undefined): speed is TokenSpeed {
  return Boolean(speed && speed.prefillTokensPerSecond > 0 && speed.decodeTokensPerSecond > 0);
}

export interface ReadEstimateInput {
  chunks: number;
  /** Prompt tokens of one step: chunk, memory, question and template. */
  promptTokens: number;
  /** The memory size setting: the most one step writes. */
  memoryTokens: number;
  /** Past steps of this engine with this model, newest reads first. */
  steps: readonly StepSample[];
  /** Speeds measured apart from any read (a calibration); used only while no step is measured. */
  speed?: TokenSpeed;
}

export interface SourcedEstimate extends RunEstimate {
  /** Past steps of this engine and model, or the measured speeds alone. */
  source: 'steps' | 'speed';
  /** The speeds the figure was worked out from, when it was. */
  speed?: TokenSpeed;
  /** Tokens each step is expected to write. */
  writtenTokens: number;
}

/**
 * Expected time of a read: per chunk, its prompt at the prefill speed plus what
 * it writes at the decode speed, and one more step for the answer. Past steps of
 * the same engine and model win over a calibration: their speeds are the
 * median reported, and what a step writes is the median written so far (at most
 * the memory size). Steps without speeds (engines that report none) fall back to
 * the median time per prompt token. With only a calibration, each step is
 * counted as writing a full memory: an upper bound. Null with nothing measured.
 */
export function estimateRead(input: ReadEstimateInput): SourcedEstimate | null {
  const { chunks, promptTokens, memoryTokens } = input;
  if (chunks <= 0) return null;
  const steps = input.steps.filter((s) => s.promptTokens > 0 && s.ms >= 0);
  const total = (msPerChunk: number) => msPerChunk * (chunks + 1);
  if (steps.length > 0) {
    const written = median(steps.flatMap((s) => (s.completionTokens !== undefined && s.completionTokens >= 0 ? [s.completionTokens] : [])));
    const writtenTokens = Math.min(memoryTokens, written ?? memoryTokens);
    const reported = steps.filter((s) => (s.prefillTokensPerSecond ?? 0) > 0 && (s.decodeTokensPerSecond ?? 0) > 0);
    if (reported.length > 0) {
      const speed: TokenSpeed = {
        prefillTokensPerSecond: median(reported.map((s) => s.prefillTokensPerSecond!))!,
        decodeTokensPerSecond: median(reported.map((s) => s.decodeTokensPerSecond!))!,
      };
      const msPerChunk = stepMs(promptTokens, writtenTokens, speed);
      return { chunks, msPerChunk, totalMs: total(msPerChunk), source: 'steps', speed, writtenTokens };
    }
    const { msPerChunk } = estimateRun(chunks, promptTokens, steps)!;
    return { chunks, msPerChunk, totalMs: total(msPerChunk), source: 'steps', writtenTokens };
  }
  if (!usable(input.speed)) return null;
  const speed = { prefillTokensPerSecond: input.speed.prefillTokensPerSecond, decodeTokensPerSecond: input.speed.decodeTokensPerSecond };
  const msPerChunk = stepMs(promptTokens, memoryTokens, speed);
  return { chunks, msPerChunk, totalMs: total(msPerChunk), source: 'speed', speed, writtenTokens: memoryTokens };
}

/** A finished read's times, as stored: when it started and ended, and each chunk's step. */
export interface ReadTiming {
  startedAt: number;
  finishedAt: number;
  /** Each chunk's step in order: the engine's time on it and when its revision was stored. */
  steps: readonly { ms: number; committedAt: number }[];
}

/** What a read costs besides its engine's steps, as past reads measured it. */
export interface BesideSteps {
  /** Before the first step: the engine and its tokenizer started, the book cut (a first read in a tab pays the most). */
  startMs: number;
  /** Per chunk: storing its revision and starting the next step. */
  perChunkMs: number;
  /** After the last revision, less one step (which estimateRead counts for the answer): the answer's sources, the run closed. */
  endMs: number;
}

/**
 * The time past reads spent outside their engine's steps, each part the median
 * over the reads: a read paused and resumed, or waiting its turn behind
 * another, is one read among several. Undefined with no finished read.
 */
export function besideSteps(reads: readonly ReadTiming[]): BesideSteps | undefined {
  const measured = reads.filter((r) => r.steps.length > 0 && r.finishedAt >= r.startedAt);
  if (measured.length === 0) return undefined;
  const part = (of: (r: ReadTiming) => number) => Math.max(0, median(measured.map(of))!);
  const gaps = (r: ReadTiming) => median(r.steps.slice(1).map((s, i) => s.committedAt - r.steps[i]!.committedAt - s.ms)) ?? 0;
  const meanStep = (r: ReadTiming) => r.steps.reduce((n, s) => n + s.ms, 0) / r.steps.length;
  return {
    startMs: part((r) => r.steps[0]!.committedAt - r.startedAt - r.steps[0]!.ms),
    perChunkMs: part(gaps),
    endMs: part((r) => r.finishedAt - r.steps.at(-1)!.committedAt - meanStep(r)),
  };
}

/** Milliseconds a read of `chunks` chunks spends besides its steps. */
export function besideMs(beside: BesideSteps, chunks: number): number {
  return beside.startMs + beside.perChunkMs * chunks + beside.endMs;
}

/**
 * The model an engine config names, the one key every engine's steps and
 * measured speeds are kept and found by: the server (for a server engine) and
 * the model's name where the engine names it (a WebLLM model id, a server's
 * model), else its file (a picked file's key, or its URL). Empty for engines
 * without a model.
 */
export function modelKey(config: Readonly<Record<string, string | number | boolean>> | undefined): string {
  const part = (name: string) => (typeof config?.[name] === 'string' ? (config[name] as string).trim() : '');
  return [part('baseUrl'), part('model') || part('localModel') || part('modelUrl')].filter(Boolean).join(' ');
}

/** Prompt tokens around a chunk (template, question, memory tags): an upper bound is honest enough for an estimate. */
export const PROMPT_OVERHEAD_TOKENS = 250;

/**
 * How far short of the chunk size the chunker's cuts fall on prose, on
 * average: it ends a chunk at the last paragraph or sentence end inside its
 * final tenth, which on the corpus's books (Frankenstein, Pride and Prejudice)
 * lies about 3% of a small chunk, and at most about 70 tokens, before the limit.
 */
const CUT_SHORT = { share: 0.03, most: 70 };

/**
 * The chunks the chunker cuts a book of `bookTokens` tokens into: none for an
 * empty book, one for a book that fits in a chunk, else chunks cut a little
 * short of the size, the last taking what is left. The size alone
 * (`bookTokens / chunkTokens`) counts the fewest a read could take, and a read
 * takes more (`test/estimate-chunks.test.ts` compares it with real books).
 */
export function chunkCount(bookTokens: number, chunkTokens: number): number {
  if (bookTokens <= 0) return 0;
  if (bookTokens <= chunkTokens) return 1;
  const cut = chunkTokens - Math.min(chunkTokens * CUT_SHORT.share, CUT_SHORT.most);
  return 1 + Math.ceil((bookTokens - chunkTokens) / cut);
}

/** Chunks of a book and the prompt tokens of each step: its chunk, the memory and the overhead. */
export function readSize(bookTokens: number | readonly number[], chunkTokens: number, memoryTokens: number): { chunks: number; promptTokens: number } {
  // A set of books: each book is cut on its own, so each ends in a chunk of its own.
  const books = typeof bookTokens === 'number' ? [bookTokens] : bookTokens;
  return {
    chunks: books.reduce((n, t) => n + chunkCount(t, chunkTokens), 0),
    promptTokens: Math.min(chunkTokens, Math.max(0, ...books)) + memoryTokens + PROMPT_OVERHEAD_TOKENS,
  };
}

/** Chunks a skim reads at most: the top share and a neighbour on each side of each. */
export function skimmedChunks(chunks: number, keep: number, neighbours: number): number {
  return Math.min(chunks, Math.max(1, Math.ceil(chunks * keep)) * (1 + 2 * neighbours));
}
