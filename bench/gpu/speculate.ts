/**
 * Speculative writing in the GPU benchmark: beside the plain step, the same
 * step's prompt written at temperature 0 plainly and then speculatively in
 * each asked mode, in one load; and what one verify pass costs for k drafted
 * tokens at the step's context.
 *
 * Modes: `ngram` (prompt lookup, as the app drafts), `oracle` (the plain
 * reply itself as the draft: every drafted token right, the upper bound) and
 * `partial:R` (the plain reply with a share 1 − R of its tokens, spread
 * evenly, made wrong).
 *
 * K: `--draft K` fixes it for every mode. Without it every mode chooses K
 * (plain decoding's 0 included) before each pass as the app does
 * (adaptivePlan), from what its own passes measure.
 */
import type { ChatMessage, GenerateResult } from '../../src/core/generation';
import type { GpuSession } from '../../src/engines/webllm/gpu-session';
import type { ModelEntry } from '../../src/engines/webllm/models/models';
import type { DraftEstimate } from '../../src/core/draft-length';
import { adaptivePlan, fixedPlan, type SpeculationPlan } from '../../src/engines/webllm/driver/speculate';
import { truncateCache, verifyForward } from '../../src/engines/webllm/driver/driver';
import { type BenchSampling, BenchUsageError } from './options';

export type SpeculateMode = { kind: 'ngram' } | { kind: 'oracle' } | { kind: 'partial'; share: number };

/** A plain reply at temperature 0 already written (the step's), with its seconds: measured, not written again. */
export interface PlainReply {
  tokens: readonly number[];
  result: GenerateResult;
  seconds: number;
}

/** `off`, one mode, or a comma list of modes (each run after the plain reply, in one load). */
export function parseSpeculate(value: string | undefined): SpeculateMode[] {
  if (value === undefined || value === 'off') return [];
  return value.split(',').map((part) => {
    const m = part.trim();
    if (m === 'ngram' || m === 'oracle') return { kind: m };
    const partial = /^partial:(\d*\.?\d+)$/.exec(m);
    const share = partial ? Number(partial[1]) : NaN;
    if (partial && share >= 0 && share <= 1) return { kind: 'partial', share };
    throw new BenchUsageError(`--speculate takes off, ngram, oracle or partial:R (R from 0 to 1), or a comma list of them; got "${m}".`);
  });
}

export function modeName(mode: SpeculateMode): string {
  return mode.kind === 'partial' ? `partial:${mode.share}` : mode.kind;
}

/** One way of writing the reply, as measured. */
export interface WritingFigure {
  written: number;
  /** Forward passes after the prompt's prefill (plain: one per token after the first). */
  passes: number;
  drafted: number;
  accepted: number;
  /** Forward passes per written token, the prefill's pass (which writes the first token) counted. */
  passesPerToken: number;
  /** Drafted tokens kept per pass after the prefill. */
  acceptedPerPass: number;
  /** Drafted tokens per pass after the prefill (a pass with nothing to draft counts as 0). */
  draftedPerPass: number;
  decodeTokensPerSecond?: number;
  /** The request, from sending it to its last token. */
  seconds: number;
  finishReason: string;
}

/** The K a mode drafted with: fixed, or chosen per pass (with what the tuner believed at the end, and the K it would draft next). */
export type DraftChoice = { fixed: number } | { adaptive: DraftEstimate & { cap: number; next: number } };

export interface ModeFigure extends WritingFigure {
  mode: string;
  draft: DraftChoice;
  /** The token ids written speculatively: with the same sampling and seed, the same as `plainTokens`. */
  speculativeTokens: number[];
  same: boolean;
}

export interface VerifyCost {
  /** Drafted tokens: the pass runs the last written token and these. */
  k: number;
  ms: number;
}

export interface SpeculationRecord {
  /** `--draft K` where given: every mode drafted K. Absent: see each mode's `draft`. */
  draft?: number;
  maxTokens: number;
  /** How every reply sampled; with its seed, each mode's tokens are the plain reply's. */
  sampling: BenchSampling;
  /** Tokens in the KV cache when the verify passes were timed: the step's prompt and its plain reply. */
  context: number;
  plain: WritingFigure;
  /** The token ids the plain reply wrote. */
  plainTokens: number[];
  modes: ModeFigure[];
  verifyCost: VerifyCost[];
}

function figure(result: GenerateResult, seconds: number): WritingFigure {
  const written = result.usage.completionTokens;
  const w = result.usage.writing ?? { passes: Math.max(0, written - 1), drafted: 0, accepted: 0 };
  return {
    written,
    passes: w.passes,
    drafted: w.drafted,
    accepted: w.accepted,
    passesPerToken: written ? Number(((w.passes + 1) / written).toFixed(4)) : 0,
    acceptedPerPass: w.passes ? Number((w.accepted / w.passes).toFixed(4)) : 0,
    draftedPerPass: w.passes ? Number((w.drafted / w.passes).toFixed(4)) : 0,
    ...(result.usage.decodeTokensPerSecond !== undefined && { decodeTokensPerSecond: Number(result.usage.decodeTokensPerSecond.toFixed(3)) }),
    seconds: Number(seconds.toFixed(3)),
    finishReason: result.finishReason,
  };
}

/**
 * The plan a mode drafts with, given the plain reply's tokens: K chosen per
 * pass as the app chooses it (plain decoding included), or fixed by `draft`.
 */
export function planFor(mode: SpeculateMode, plain: readonly number[], draft: number | undefined): SpeculationPlan {
  if (mode.kind === 'ngram') return draft === undefined ? adaptivePlan() : fixedPlan(draft);
  // partial: position j is right where the running count of right ones, j·R rounded down, steps up.
  const right = (j: number) => mode.kind === 'oracle' || Math.floor((j + 1) * mode.share) > Math.floor(j * mode.share);
  const drafted = plain.map((t, j) => (right(j) ? t : t + 1));
  const from = (written: readonly number[]) => drafted.slice(written.length);
  return draft === undefined ? adaptivePlan(undefined, from) : fixedPlan(draft, from);
}

function choiceOf(plan: SpeculationPlan): DraftChoice {
  if (!plan.tuner) return { fixed: plan.maxDraft };
  return { adaptive: { ...plan.tuner.estimate(), cap: plan.maxDraft, next: plan.tuner.next(plan.maxDraft) } };
}

function describeChoice(choice: DraftChoice): string {
  if ('fixed' in choice) return `K = ${choice.fixed}`;
  const a = choice.adaptive;
  return `K adaptive from 0 to ${a.cap} (at the end: ${(a.alpha * 100).toFixed(0)} % of drafted positions kept, ${a.written[8]!.toFixed(2)} tokens a pass at K = 8, pass ${(a.cost.base * 1000).toFixed(1)} ms + ${(a.cost.perToken * 1000).toFixed(2)} ms a drafted token, plain step ${(a.decode * 1000).toFixed(1)} ms, next K ${a.next})`;
}

export interface SpeculationBench {
  session: GpuSession;
  model: ModelEntry;
  window: number;
  system?: string;
  log(line: string): void;
}

/** What measureSpeculation writes and times. */
export interface SpeculationStep {
  messages: readonly ChatMessage[];
  /** The reply's cap. */
  maxTokens: number;
  modes: readonly SpeculateMode[];
  /** `--draft K`: a fixed K for every mode. */
  draft?: number;
  /** The draft lengths whose verify pass is timed at the step's context. */
  verifyKs: readonly number[];
  /** The plain reply where it was already written with the same sampling (the suite's step): not written again. */
  plain?: PlainReply;
  /** How every reply samples (default temperature 0): with one seed, a mode writes the plain reply's tokens however it drafts. */
  sampling?: BenchSampling;
}

/** The measurements above, for the step's `messages`, writing up to `maxTokens`. */
export async function measureSpeculation(b: SpeculationBench, step: SpeculationStep): Promise<SpeculationRecord> {
  const { messages, maxTokens, modes, draft, verifyKs } = step;
  const sampling = step.sampling ?? { temperature: 0, topP: 0.95, seed: 1 };
  const options = { maxTokens, temperature: sampling.temperature, topP: sampling.topP, seed: sampling.seed };
  const write = async (plan?: SpeculationPlan) => {
    const t0 = performance.now();
    const out = await b.session.write(b.model, b.window, { messages, options, system: b.system, speculation: plan });
    return { ...out, seconds: (performance.now() - t0) / 1000 };
  };
  const plainRun = step.plain ?? (await write());
  const plain = figure(plainRun.result, plainRun.seconds);
  const plainTokens = [...plainRun.tokens];
  b.log(`Plain, temperature ${sampling.temperature}: ${plain.written} written in ${plain.passes + 1} passes, ${plain.seconds.toFixed(2)} s.`);

  // The cache now holds the prompt and the plain reply (less its last token): the step's context.
  const verifyCost: VerifyCost[] = [];
  const context = await b.session.withPipeline(b.model, b.window, async (pipeline) => {
    const at = pipeline.filledKVCacheLength;
    for (const k of verifyKs) {
      if (at + k + 1 > pipeline.contextWindowSize || k + 1 > pipeline.prefillChunkSize) continue;
      const tokens = Array.from({ length: k + 1 }, (_, i) => plainTokens[i % Math.max(1, plainTokens.length)] ?? 0);
      const t0 = performance.now();
      await verifyForward(pipeline, tokens);
      const ms = performance.now() - t0;
      truncateCache(pipeline, at);
      verifyCost.push({ k, ms: Number(ms.toFixed(1)) });
      b.log(`One verify pass with ${k} drafted tokens at ${at} tokens of context: ${ms.toFixed(0)} ms.`);
    }
    return at;
  });

  const figures: ModeFigure[] = [];
  for (const mode of modes) {
    const plan = planFor(mode, plainTokens, draft);
    const run = await write(plan);
    const f = figure(run.result, run.seconds);
    const same = run.tokens.join() === plainTokens.join();
    const choice = choiceOf(plan);
    figures.push({ mode: modeName(mode), draft: choice, ...f, speculativeTokens: run.tokens, same });
    b.log(
      `Speculative (${modeName(mode)}, ${describeChoice(choice)}): ${f.written} written in ${f.passes + 1} passes (${f.passesPerToken} per token, ${f.draftedPerPass} drafted per pass), ` +
        `${f.accepted} of ${f.drafted} drafted accepted, ${f.seconds.toFixed(2)} s; ${same ? 'the same tokens as plain' : 'NOT the same tokens as plain'}.`,
    );
  }
  return { ...(draft !== undefined && { draft }), maxTokens, sampling, context, plain, plainTokens, modes: figures, verifyCost };
}

/** The record's lines for the terminal. */
export function describeSpeculation(s: SpeculationRecord): string[] {
  const rate = (n: number | undefined) => (n === undefined ? '—' : `${n.toFixed(2)} tokens/s`);
  const row = (name: string, f: WritingFigure) =>
    `  ${name.padEnd(17)} ${f.written} written in ${f.passes + 1} passes: ${f.passesPerToken} passes per token, ${f.acceptedPerPass} accepted per pass (${f.accepted} of ${f.drafted} drafted, ${f.draftedPerPass} per pass); decode ${rate(f.decodeTokensPerSecond)}; ${f.seconds.toFixed(2)} s`;
  return [
    `  speculation       temperature ${s.sampling.temperature}${s.sampling.temperature ? `, top-p ${s.sampling.topP}, seed ${s.sampling.seed}` : ''}, up to ${s.maxTokens} written, ${s.draft === undefined ? 'K per mode' : `K = ${s.draft}`}`,
    row('  plain', s.plain),
    ...s.modes.flatMap((m) => [`${row(`  ${m.mode}`, m)}${m.same ? '' : '  — tokens differ from plain!'}`, `${''.padEnd(20)}${describeChoice(m.draft)}`]),
    `  verify pass       at ${s.context} tokens: ${s.verifyCost.map((c) => `k=${c.k} ${c.ms.toFixed(0)} ms`).join(', ') || '—'}`,
  ];
}

/** The suite's table: the plain step and each mode, with step seconds, decode tokens/s, passes per token and ratios to plain. */
export function describeSuite(s: SpeculationRecord): string[] {
  const plain = s.plain;
  const line = (name: string, f: WritingFigure) => {
    const decode = f.decodeTokensPerSecond === undefined ? '—' : f.decodeTokensPerSecond.toFixed(2);
    const ratio = plain.seconds > 0 ? (f.seconds / plain.seconds).toFixed(2) : '—';
    return `  ${name.padEnd(10)} ${f.seconds.toFixed(2).padStart(9)} ${decode.padStart(11)} ${f.passesPerToken.toFixed(3).padStart(10)} ${ratio.padStart(9)}`;
  };
  return [
    `  suite      ${'step s'.padStart(9)} ${'decode t/s'.padStart(11)} ${'passes/tok'.padStart(10)} ${'× plain'.padStart(9)}`,
    line('plain', plain),
    ...s.modes.map((m) => `${line(m.mode, m)}${m.same ? '' : '  (tokens differ from plain)'}`),
  ];
}
