/**
 * Speculative writing inside WebLLM's own request: WebLLM prefills the
 * prompt and writes the first token as always; each of its decode steps is
 * then either its own plain step or one pass that drafts K tokens by prompt
 * lookup (K, plain decoding's 0 included, chosen before each pass from
 * measurements, see DraftLength), runs [last token + draft] through the
 * model at once, keeps drafted tokens by the exact acceptance rule under the
 * request's own sampling, takes each written token into the reply as a
 * decode step would (stop tokens, stop strings, max_tokens and the context
 * window stop it where they stop plain decoding), and truncates the cache
 * back to what plain decoding would hold. WebLLM's request loop around it
 * streams, hears interrupts between passes and reports usage as usual. All
 * of the model's state is reached through a WritingDriver (driver.ts).
 */
import type { WritingStats } from '../../../core/generation';
import { DraftLength, MAX_DRAFT } from '../../../core/draft-length';
import { cleanUpAfter } from '../../../core/failures';
import { DEFAULT_LOOKUP, lookupDraft } from '../../../core/prompt-lookup';
import { verifyPass } from '../../../core/speculative';
import { type GenConfig, pipelineDriver, type VerifyPipeline, type WritingDriver } from './driver';
import type { WebLLMVersion } from '../versions';

export interface SpeculationPlan {
  /** Drafted tokens per pass at most: K itself where there is no tuner. */
  maxDraft: number;
  /** The longest n-gram looked up. */
  maxNgram: number;
  /** Drafts for the reply so far in place of prompt lookup (the benchmark's oracle and partly right drafts). */
  draft?: (written: readonly number[]) => readonly number[];
  /**
   * Chooses K for each pass (0, plain decoding, up to maxDraft) from the
   * passes it has seen, and learns from each. One run's: its requests share
   * it. Without one K is maxDraft, fixed.
   */
  tuner?: DraftLength;
  /** Sees each row of logits a pass decides a token by, with that token's index in the reply (the self-check's ties and sampling). */
  onLogits?: (index: number, row: Float32Array) => void;
}

/**
 * The app's plan: K chosen before each pass by `tuner` (one run's, see
 * DraftLength), plain decoding included, at most MAX_DRAFT. A fixed K would
 * be a guess: how often prompt lookup is right depends on the book and the
 * model, and what a pass costs on the GPU.
 */
export function adaptivePlan(tuner: DraftLength = new DraftLength(), draft?: SpeculationPlan['draft']): SpeculationPlan {
  return { maxDraft: MAX_DRAFT, maxNgram: DEFAULT_LOOKUP.maxNgram, tuner, ...(draft && { draft }) };
}

/** A plan that drafts up to `k` tokens a pass, always (the benchmark's --draft, tests). */
export function fixedPlan(k: number, draft?: SpeculationPlan['draft']): SpeculationPlan {
  return { maxDraft: k, maxNgram: DEFAULT_LOOKUP.maxNgram, ...(draft && { draft }) };
}

/**
 * K for the next pass where `room` drafted tokens fit (the reply's cap, the
 * window, the pass): the tuner is asked for the best K up to that room. A K
 * best for a longer draft, then cut to the room, can write slower than plain
 * decoding (K = 0).
 */
export function draftLengthFor(plan: SpeculationPlan, room: number): number {
  const cap = Math.min(plan.maxDraft, room);
  if (cap <= 0) return 0;
  return plan.tuner ? plan.tuner.next(cap) : cap;
}

/** One request's speculative writing: each of WebLLM's decode steps goes through `decode`. */
export class SpeculativeDecoder {
  readonly stats: WritingStats = { passes: 0, drafted: 0, accepted: 0 };
  private prompt: number[] | undefined;

  constructor(
    private readonly version: WebLLMVersion,
    /** The request's prompt as text: prompt lookup drafts from its tokens. */
    private readonly promptText: string,
    private readonly plan: SpeculationPlan,
    private readonly random: () => number,
  ) {}

  /** One decode step of WebLLM's on its pipeline (see step). */
  decode(pipeline: VerifyPipeline, genConfig: GenConfig, plain: () => Promise<unknown>): Promise<void> {
    return this.step(pipelineDriver(this.version, pipeline, genConfig), plain);
  }

  /** One forward pass in place of one decode step: `plain` (WebLLM's own step) where K is 0 or nothing is drafted. */
  async step(driver: WritingDriver, plain: () => Promise<unknown>): Promise<void> {
    if (driver.stopped()) throw new Error('Cannot run decode when stopped');
    this.stats.passes++;
    const verifiable = driver.verifiable();
    const k = verifiable ? draftLengthFor(this.plan, driver.room()) : 0;
    const draft = k > 0 ? this.draftFor(driver, k) : [];
    if (!draft.length) return this.plainStep(driver, plain, verifiable);
    const started = performance.now();
    const pass = await this.verify(driver, draft);
    this.stats.drafted += draft.length;
    this.stats.accepted += pass.accepted;
    const seconds = (performance.now() - started) / 1000;
    // A pass can stop (a stop token, the cap) on a kept token: then no drafted token was rejected.
    const rejected = pass.accepted < draft.length && pass.written > pass.accepted;
    this.plan.tuner?.observePass({ drafted: draft.length, accepted: pass.accepted, rejected, seconds });
    driver.countDecode(seconds, pass.written);
  }

  /** The request has ended: a draft still being compared with plain decoding ends with it. */
  end(): void {
    this.plan.tuner?.endReply();
  }

  /**
   * WebLLM's own step, timed for the tuner. Where the tuner chose it, a draft
   * is still made (prompt lookup costs no GPU time) and compared with the
   * tokens plain decoding writes: that is how copying that starts again is seen.
   */
  private async plainStep(driver: WritingDriver, plain: () => Promise<unknown>, verifiable: boolean): Promise<void> {
    const tuner = this.plan.tuner;
    if (tuner && verifiable && !tuner.shadowing) tuner.shadow(this.draftFor(driver, this.plan.maxDraft));
    const before = driver.written().length;
    const started = performance.now();
    await plain();
    tuner?.observeDecode((performance.now() - started) / 1000);
    if (driver.written().length > before) tuner?.observeWritten(driver.written().at(-1)!);
  }

  /**
   * Runs [last written token + draft] at once and writes what the acceptance
   * rule keeps, plus the token drawn where it stops. However it ends, a
   * throw included, the cache then holds what plain decoding would: everything
   * before the last written token.
   */
  private async verify(driver: WritingDriver, draft: readonly number[]): Promise<{ accepted: number; written: number }> {
    const base = driver.cached();
    const { logits, vocab } = await driver.forward([driver.written().at(-1)!, ...draft]);
    let written = 0;
    return cleanUpAfter(
      'Truncating the KV cache after a failed verify pass',
      () => {
        const pass = verifyPass(
          draft,
          (i) => {
            const row = logits.subarray(i * vocab, (i + 1) * vocab);
            const p = driver.distribution(row);
            this.plan.onLogits?.(driver.written().length, row);
            return p;
          },
          // As plain decoding has it when this token is written: the cache holds everything before it.
          (token) => driver.commit(token, base + 1 + written++),
          this.random,
        );
        return { accepted: pass.accepted, written };
      },
      // The forward left base + 1 + draft.length entries; plain decoding would hold base + written.
      () => driver.truncate(base + written),
    );
  }

  /** Up to `k` drafted tokens, no more than the reply's cap and the context window leave room for. */
  private draftFor(driver: WritingDriver, k: number): readonly number[] {
    const room = Math.min(k, driver.room());
    const written = driver.written();
    if (room <= 0) return [];
    if (this.plan.draft) return this.plan.draft(written).slice(0, room);
    this.prompt ??= driver.encode(this.promptText);
    return lookupDraft(this.prompt, written, { maxNgram: this.plan.maxNgram, minNgram: 1, maxDraft: room });
  }
}
