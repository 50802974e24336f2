/**
 * Several questions in the GPU benchmark: the step's prompt asked N
 * questions, written one after another (each as the app writes one step)
 * and then as one batch (one KV-cache sequence each), in one load, with the
 * bench's sampling (temperature 0 unless given; each question its own seed
 * from the read's, as a read of several questions has it); the seconds,
 * forward passes and tokens each way, the drafted and kept tokens, what
 * sampling a row cost in the batch, and whether the batch wrote each
 * question's tokens. The first question is the step's own prompt, so a plain
 * step written with the same sampling is its reply one by one.
 */
import type { ChatMessage, GenerateResult } from '../../src/core/generation';
import { questionSeed } from '../../src/core/plan';
import { type BenchSampling, SUITE_QUESTIONS, SUITE_SAMPLINGS } from './options';
import type { SpeculationPlan } from '../../src/engines/webllm/driver/speculate';
import { modeName, planFor, type PlainReply, type SpeculateMode, type SpeculationBench } from './speculate';

/** One way of writing the N replies, as measured. */
export interface BatchWay {
  seconds: number;
  /** Forward passes, prefill included. */
  passes: number;
  /** Tokens written over all questions. */
  written: number;
  tokensPerPass: number;
  /** Drafted tokens over all questions, and of them the ones kept (0 and 0 where nothing speculates). */
  drafted: number;
  kept: number;
}

export interface BatchRecord {
  questions: number;
  maxTokens: number;
  /** How both ways sampled: the first question with `seed`, each other with questionSeed(seed, i). */
  sampling: BenchSampling;
  /** The speculative mode both ways wrote with (--speculate's first), or absent: plain. */
  mode?: string;
  single: BatchWay;
  batched: BatchWay & { prefillPasses: number; writePasses: number };
  /** Single seconds over batched seconds: above 1, the batch was faster. */
  speedup: number;
  singleTokens: number[][];
  batchedTokens: number[][];
  /** Whether every question's batched tokens are its single ones. */
  same: boolean;
  /** The median milliseconds one row's sampling took in the batch (on the CPU: penalties, tempered softmax, top-p); null where the questions took turns. */
  samplingMsPerRow: number | null;
}

/** The step's messages asking question `i` of `n`: the same section and memory, the question marked with its number. */
export function questionMessages(messages: readonly ChatMessage[], question: string, i: number, n: number): ChatMessage[] {
  if (i === 0) return messages.map((m) => ({ ...m }));
  const asked = `${question} (Question ${i + 1} of ${n}.)`;
  return messages.map((m) => (m.role === 'user' && m.content.includes(question) ? { ...m, content: m.content.replace(question, asked) } : { ...m }));
}

const round = (n: number, digits = 3) => Number(n.toFixed(digits));

function way(seconds: number, passes: number, tokens: number[][], results: readonly GenerateResult[]): BatchWay {
  const written = tokens.reduce((n, t) => n + t.length, 0);
  const drafted = results.reduce((n, r) => n + (r.usage.writing?.drafted ?? 0), 0);
  const kept = results.reduce((n, r) => n + (r.usage.writing?.accepted ?? 0), 0);
  return { seconds: round(seconds), passes, written, tokensPerPass: passes ? round(written / passes, 4) : 0, drafted, kept };
}

function median(values: readonly number[]): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return round(Number.isInteger(mid) ? (sorted[mid - 1]! + sorted[mid]!) / 2 : sorted[Math.floor(mid)]!, 4);
}

/** Forward passes a single reply took: its prefill, then its decode steps or verify passes. */
function singlePasses(result: GenerateResult): number {
  return 1 + (result.usage.writing?.passes ?? Math.max(0, result.usage.completionTokens - 1));
}

/** Writes the N questions both ways (see the file's comment). */
export async function measureBatch(
  b: SpeculationBench,
  step: {
    messages: readonly ChatMessage[];
    question: string;
    questions: number;
    maxTokens: number;
    mode?: SpeculateMode;
    draft?: number;
    /** How both ways sample (default: temperature 0, top-p 0.95, seed 1). */
    sampling?: BenchSampling;
    /** The first question's plain reply where the step already wrote it with the same sampling and seed: not written again. */
    first?: PlainReply;
  },
): Promise<BatchRecord> {
  const { questions: n, maxTokens, mode, draft } = step;
  const sampling = step.sampling ?? { temperature: 0, topP: 0.95, seed: 1 };
  // A reply written with a plan is no plain one: the step's stands in only where both ways write plainly.
  const first = mode ? undefined : step.first;
  const asked = Array.from({ length: n }, (_, i) => questionMessages(step.messages, step.question, i, n));
  const request = (messages: ChatMessage[], i: number, plan?: SpeculationPlan) => ({
    messages,
    options: { maxTokens, temperature: sampling.temperature, topP: sampling.topP, seed: questionSeed(sampling.seed, i) },
    system: b.system,
    speculation: plan,
  });
  // Drafts copied from the plain replies (oracle, partial) need those replies first; prompt lookup needs nothing.
  const plain: number[][] = [];
  // The step's reply, where given, is the first question's plain reply.
  if (mode && mode.kind !== 'ngram') {
    for (const [i, m] of asked.entries())
      plain.push(i === 0 && step.first ? [...step.first.tokens] : (await b.session.write(b.model, b.window, request(m, i))).tokens);
  }
  const plans = () => asked.map((_, i) => (mode ? planFor(mode, plain[i] ?? [], draft) : undefined));

  const singleTokens: number[][] = first ? [[...first.tokens]] : [];
  const singleResults: GenerateResult[] = first ? [first.result] : [];
  let singlePassCount = first ? singlePasses(first.result) : 0;
  const singlePlans = plans();
  const t0 = performance.now();
  for (const [i, m] of asked.entries()) {
    if (i === 0 && first) continue;
    const out = await b.session.write(b.model, b.window, request(m, i, singlePlans[i]));
    singleTokens.push(out.tokens);
    singleResults.push(out.result);
    singlePassCount += singlePasses(out.result);
  }
  const singleSeconds = (performance.now() - t0) / 1000 + (first?.seconds ?? 0);
  b.log(
    `${n} questions one after another: ${singleTokens.map((t) => t.length).join(' + ')} written in ${singlePassCount} passes, ${singleSeconds.toFixed(2)} s.`,
  );

  const batchPlans = plans();
  const t1 = performance.now();
  const out = await b.session.writeBatch(
    b.model,
    b.window,
    asked.map((m, i) => request(m, i, batchPlans[i])),
  );
  const batchSeconds = (performance.now() - t1) / 1000;
  const failed = out.results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  const batchedResults = out.results.map((r) => (r as PromiseFulfilledResult<GenerateResult>).value);
  const batchedPasses = out.passes.prefill + out.passes.write;
  b.log(
    `${n} questions in one batch${out.batched ? '' : ' (written in turns: the library cannot batch)'}: ${out.tokens.map((t) => t.length).join(' + ')} written in ${batchedPasses} passes (${out.passes.prefill} prefill), ${batchSeconds.toFixed(2)} s.`,
  );
  return {
    questions: n,
    maxTokens,
    sampling,
    ...(mode && { mode: modeName(mode) }),
    single: way(singleSeconds, singlePassCount, singleTokens, singleResults),
    batched: { ...way(batchSeconds, batchedPasses, out.tokens, batchedResults), prefillPasses: out.passes.prefill, writePasses: out.passes.write },
    speedup: batchSeconds > 0 ? round(singleSeconds / batchSeconds) : 0,
    singleTokens,
    batchedTokens: out.tokens,
    same: out.tokens.every((t, i) => t.join() === singleTokens[i]!.join()),
    samplingMsPerRow: median(out.samplingMs ?? []),
  };
}

/** The suite's batches: 1, 2 and 4 questions of `step.messages`, greedy and at the paper's sampling, each way (see measureBatch). */
export async function measureSuiteBatches(
  b: SpeculationBench,
  step: { messages: readonly ChatMessage[]; question: string; maxTokens: number; mode?: SpeculateMode; draft?: number; seed: number },
): Promise<BatchRecord[]> {
  const records: BatchRecord[] = [];
  for (const sampling of SUITE_SAMPLINGS) {
    for (const questions of SUITE_QUESTIONS) {
      const { seed, ...rest } = step;
      records.push(await measureBatch(b, { ...rest, questions, sampling: { ...sampling, seed } }));
    }
  }
  return records;
}

/** The record's lines for the terminal. */
export function describeBatch(r: BatchRecord): string[] {
  const row = (name: string, w: BatchWay) =>
    `  ${name.padEnd(17)} ${w.seconds.toFixed(2).padStart(8)} s ${String(w.passes).padStart(5)} passes ${String(w.written).padStart(5)} written ${w.tokensPerPass.toFixed(2).padStart(6)} per pass`;
  const s = r.sampling;
  const sampled = s.temperature === 0 ? 'temperature 0' : `temperature ${s.temperature}, top-p ${s.topP}, seed ${s.seed}`;
  const drafts = (w: BatchWay) => (w.drafted ? `; ${w.kept} of ${w.drafted} drafted kept` : '');
  return [
    `  questions         ${r.questions} at ${sampled}, up to ${r.maxTokens} written each${r.mode ? `, speculative (${r.mode})` : ''}`,
    row('  one by one', r.single) + drafts(r.single),
    row('  one batch', r.batched) + drafts(r.batched),
    `    batch ${r.speedup.toFixed(2)}× as fast as one by one; ${r.same ? 'the same tokens for every question' : 'TOKENS DIFFER from the single replies'}`,
    `    sampling a row in the batch: ${r.samplingMsPerRow === null ? '— (the questions took turns)' : `${r.samplingMsPerRow.toFixed(3)} ms (median)`}`,
  ];
}
