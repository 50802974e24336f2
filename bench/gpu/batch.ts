/**
 * Several questions in the GPU benchmark: the step's prompt asked N
 * questions, written at temperature 0 one after another (each as the app
 * writes one step) and then as one batch (one KV-cache sequence each), in one
 * load; the seconds, forward passes and tokens each way, and whether the
 * batch wrote each question's tokens. The first question is the step's own
 * prompt, so a plain step written at temperature 0 is its reply one by one.
 */
import type { ChatMessage, GenerateResult } from '../../src/core/generation';
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
}

export interface BatchRecord {
  questions: number;
  maxTokens: number;
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
}

/** The step's messages asking question `i` of `n`: the same section and memory, the question marked with its number. */
export function questionMessages(messages: readonly ChatMessage[], question: string, i: number, n: number): ChatMessage[] {
  if (i === 0) return messages.map((m) => ({ ...m }));
  const asked = `${question} (Question ${i + 1} of ${n}.)`;
  return messages.map((m) => (m.role === 'user' && m.content.includes(question) ? { ...m, content: m.content.replace(question, asked) } : { ...m }));
}

const round = (n: number, digits = 3) => Number(n.toFixed(digits));

function way(seconds: number, passes: number, tokens: number[][]): BatchWay {
  const written = tokens.reduce((n, t) => n + t.length, 0);
  return { seconds: round(seconds), passes, written, tokensPerPass: passes ? round(written / passes, 4) : 0 };
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
    /** The first question's plain reply where the step already wrote it at temperature 0: not written again. */
    first?: PlainReply;
  },
): Promise<BatchRecord> {
  const { questions: n, maxTokens, mode, draft } = step;
  // A reply written with a plan is no plain one: the step's stands in only where both ways write plainly.
  const first = mode ? undefined : step.first;
  const asked = Array.from({ length: n }, (_, i) => questionMessages(step.messages, step.question, i, n));
  const request = (messages: ChatMessage[], plan?: SpeculationPlan) => ({
    messages,
    options: { maxTokens, temperature: 0 },
    system: b.system,
    speculation: plan,
  });
  // Drafts copied from the plain replies (oracle, partial) need those replies first; prompt lookup needs nothing.
  const plain: number[][] = [];
  if (mode && mode.kind !== 'ngram') for (const m of asked) plain.push((await b.session.write(b.model, b.window, request(m))).tokens);
  const plans = () => asked.map((_, i) => (mode ? planFor(mode, plain[i] ?? [], draft) : undefined));

  const singleTokens: number[][] = first ? [[...first.tokens]] : [];
  let singlePassCount = first ? singlePasses(first.result) : 0;
  const singlePlans = plans();
  const t0 = performance.now();
  for (const [i, m] of asked.entries()) {
    if (i === 0 && first) continue;
    const out = await b.session.write(b.model, b.window, request(m, singlePlans[i]));
    singleTokens.push(out.tokens);
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
    asked.map((m, i) => request(m, batchPlans[i])),
  );
  const batchSeconds = (performance.now() - t1) / 1000;
  const failed = out.results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  const batchedPasses = out.passes.prefill + out.passes.write;
  b.log(
    `${n} questions in one batch${out.batched ? '' : ' (written in turns: the library cannot batch)'}: ${out.tokens.map((t) => t.length).join(' + ')} written in ${batchedPasses} passes (${out.passes.prefill} prefill), ${batchSeconds.toFixed(2)} s.`,
  );
  return {
    questions: n,
    maxTokens,
    ...(mode && { mode: modeName(mode) }),
    single: way(singleSeconds, singlePassCount, singleTokens),
    batched: { ...way(batchSeconds, batchedPasses, out.tokens), prefillPasses: out.passes.prefill, writePasses: out.passes.write },
    speedup: batchSeconds > 0 ? round(singleSeconds / batchSeconds) : 0,
    singleTokens,
    batchedTokens: out.tokens,
    same: out.tokens.every((t, i) => t.join() === singleTokens[i]!.join()),
  };
}

/** The record's lines for the terminal. */
export function describeBatch(r: BatchRecord): string[] {
  const row = (name: string, w: BatchWay) =>
    `  ${name.padEnd(17)} ${w.seconds.toFixed(2).padStart(8)} s ${String(w.passes).padStart(5)} passes ${String(w.written).padStart(5)} written ${w.tokensPerPass.toFixed(2).padStart(6)} per pass`;
  return [
    `  questions         ${r.questions} at temperature 0, up to ${r.maxTokens} written each${r.mode ? `, speculative (${r.mode})` : ''}`,
    row('  one by one', r.single),
    row('  one batch', r.batched),
    `    batch ${r.speedup.toFixed(2)}× as fast as one by one; ${r.same ? 'the same tokens for every question' : 'TOKENS DIFFER from the single replies'}`,
  ];
}
