/**
 * Several requests written together, one sequence each in one paged KV
 * cache: their prompts prefilled in shared passes (at most a prefill chunk
 * of tokens a pass), then each pass writes one token for every request still
 * writing, or, where a request drafts (prompt lookup, as speculate.ts does;
 * how far each drafts is chosen for the whole batch, batch-speculate.ts),
 * its last token and draft verified with everyone else's in one pass, its
 * rejected tail popped from its own sequence. Each request samples with its
 * own settings and stops on its own (a stop token or string, its cap, the
 * window); one that stops, fails or is aborted leaves the batch and frees
 * its sequence, the others go on. A forward that fails fails every request
 * still in it. All of the model is reached through BatchModel (batch-model.ts;
 * driver-batch.ts on WebLLM), so this runs on a fake in tests.
 */
import { abortError, type GenerateOptions, type GenerateResult, type WritingStats } from '../../../core/generation';
import { cleanUpAfter } from '../../../core/failures';
import type { PassCosts } from '../../../core/pass-costs';
import { replyRandom } from '../../../core/random';
import { type PassResult, verifyPass } from '../../../core/speculative';
import type { BatchKernels, BatchModel, PreparedSequence, SequenceWriter } from './batch-model';
import { batchCosts, chooseDrafts, type DraftOffer, offerFor } from './batch-speculate';
import type { SpeculationPlan } from './speculate';

/** One request of a batch as the session gives it. */
export interface BatchItem {
  options: GenerateOptions;
  /** Speculative writing's plan; without one the request is written a token a pass. */
  plan?: SpeculationPlan;
}

/** What a batch wrote: each request settled, with its token ids, and the forward passes it took. */
export interface BatchOutcome {
  results: PromiseSettledResult<GenerateResult>[];
  tokens: number[][];
  /** Forward passes run: prefill and writing. */
  passes: { prefill: number; write: number };
  /** Tokens drafted in verify passes, and of those the tokens kept, summed over the requests. */
  drafted: number;
  kept: number;
  /** A forward pass's failure (a lost device, say): every request still writing was rejected with it. */
  failure?: unknown;
  /** Where a cache for the whole batch could not be allocated: the requests were written in smaller groups. */
  split?: BatchSplit;
}

/** A batch written in groups because its cache could not be allocated. */
export interface BatchSplit {
  /** The most requests a cache was asked for and could not be allocated. */
  asked: number;
  /** The largest group then tried (each half of a group that failed, down to one). */
  size: number;
  /** Why the allocation failed. */
  error: unknown;
}

/** A request prepared for the batch, by its index among the batch's requests. */
interface Ready {
  index: number;
  prepared: PreparedSequence;
}

interface Member {
  index: number;
  seq: number;
  item: BatchItem;
  prompt: readonly number[];
  writer: SequenceWriter;
  random: () => number;
  /** Entries its sequence holds. */
  cached: number;
  /** Prompt tokens prefilled so far. */
  filled: number;
  shown: string;
  stats: WritingStats;
  sampled: number;
  prefillSeconds: number;
  decodeSeconds: number;
}

const seconds = (since: number) => (performance.now() - since) / 1000;

/**
 * Writes `items` on `model` together (see the file's comment). Never
 * throws: each request is settled on its own.
 */
export function writeBatch(model: BatchModel, items: readonly BatchItem[]): Promise<BatchOutcome> {
  return new BatchRun(model, items).run();
}

/** One batch from its requests' preparation to the last one's end. */
class BatchRun {
  private readonly results: PromiseSettledResult<GenerateResult>[];
  private readonly tokens: number[][];
  private readonly passes = { prefill: 0, write: 0 };
  private readonly drafts = { drafted: 0, kept: 0 };
  private live: Member[] = [];
  private kernels!: BatchKernels;
  private costs!: PassCosts;
  private split: BatchSplit | undefined;

  constructor(
    private readonly model: BatchModel,
    private readonly items: readonly BatchItem[],
  ) {
    this.results = new Array(items.length);
    this.tokens = items.map(() => []);
  }

  async run(): Promise<BatchOutcome> {
    const failed = await this.writeGroup(await this.prepareAll());
    const { results, tokens, passes, split, drafts } = this;
    return { results, tokens, passes, ...drafts, ...(failed && { failure: failed.error }), ...(split !== undefined && { split }) };
  }

  /**
   * Writes `group` on one cache. A cache that cannot be allocated is tried
   * again for each half of the group in turn, down to one request. Gives the
   * failure that ended the writing (every request still writing failed with it).
   */
  private async writeGroup(group: readonly Ready[]): Promise<{ error: unknown } | undefined> {
    if (!group.length) return undefined;
    // Room for the prompt, the reply and the one token a pass writes past what it keeps.
    const capacities = group.map(({ index, prepared }) => Math.min(this.model.window, prepared.prompt.length + this.items[index]!.options.maxTokens) + 1);
    try {
      this.kernels = this.model.open(capacities);
    } catch (error) {
      if (group.length === 1) {
        this.fail(group[0]!.index, error);
        return { error };
      }
      const half = Math.ceil(group.length / 2);
      this.split = { asked: Math.max(this.split?.asked ?? 0, group.length), size: Math.min(this.split?.size ?? half, half), error };
      const first = await this.writeGroup(group.slice(0, half));
      if (!first) return this.writeGroup(group.slice(half));
      for (const { index } of group.slice(half)) this.fail(index, first.error);
      return first;
    }
    this.live = group.map(({ index, prepared }, seq) => this.member(index, seq, prepared));
    try {
      await this.prefillPasses();
      await this.writePasses();
    } catch (error) {
      // A forward failed: it ran every member's tokens, so none can go on.
      for (const m of [...this.live]) this.leave(m, { status: 'rejected', reason: m.item.options.signal?.aborted ? abortError() : error });
      return { error };
    } finally {
      this.kernels.dispose();
    }
    return undefined;
  }

  private fail(index: number, reason: unknown) {
    this.results[index] = { status: 'rejected', reason };
  }

  /** Each request's prompt and writing state, in order; one WebLLM refuses (or aborted already) fails alone. */
  private async prepareAll() {
    const ready: Ready[] = [];
    for (const [index, item] of this.items.entries()) {
      if (item.options.signal?.aborted) {
        this.fail(index, abortError());
        continue;
      }
      try {
        ready.push({ index, prepared: await this.model.prepare(index) });
      } catch (e) {
        this.fail(index, e);
      }
    }
    return ready;
  }

  private member(index: number, seq: number, prepared: PreparedSequence): Member {
    const item = this.items[index]!;
    const seed = item.options.seed ?? Math.floor(Math.random() * 2 ** 32);
    const { prompt, writer } = prepared;
    const stats = { passes: 0, drafted: 0, accepted: 0 };
    return {
      index,
      seq,
      item,
      prompt,
      writer,
      // One number per reply position: the reply is the one this request writes alone with the seed.
      random: replyRandom(seed, () => writer.written().length),
      cached: 0,
      filled: 0,
      shown: '',
      stats,
      sampled: 0,
      prefillSeconds: 0,
      decodeSeconds: 0,
    };
  }

  /** A member leaves the batch: settled, its sequence freed. */
  private leave(m: Member, outcome: PromiseSettledResult<GenerateResult>) {
    this.live = this.live.filter((x) => x !== m);
    this.results[m.index] = outcome;
    this.tokens[m.index] = [...m.writer.written()];
    try {
      this.kernels.remove(m.seq);
    } catch {
      // its result stands; the cache is disposed at the end anyway
    }
    m.item.plan?.tuner?.endReply();
  }

  /** Requests aborted since the last pass leave before the next. */
  private dropAborted() {
    for (const m of this.live) if (m.item.options.signal?.aborted) this.leave(m, { status: 'rejected', reason: abortError() });
  }

  /** Samples and commits `m`'s tokens of a pass (`run`) and streams its new text; a throw fails `m` alone (then undefined). */
  private stepOne<T>(m: Member, run: () => T): T | undefined {
    try {
      const out = run();
      const text = m.writer.text();
      if (text.startsWith(m.shown) && text.length > m.shown.length) {
        const delta = text.slice(m.shown.length);
        m.shown = text;
        m.item.options.onToken?.(delta);
      }
      return out;
    } catch (e) {
      this.leave(m, { status: 'rejected', reason: e });
      return undefined;
    }
  }

  /** Members of a pass that stopped in it leave the batch, the pass's time counted. */
  private settle(members: readonly Member[]) {
    for (const m of members) if (this.live.includes(m) && m.writer.stopped()) this.leave(m, { status: 'fulfilled', value: resultOf(m) });
  }

  /** Prompts packed into passes of at most a chunk, a long prompt split across passes; a finished prompt writes its first token, as WebLLM's prefill does. */
  private async prefillPasses() {
    while (this.live.some((m) => m.filled < m.prompt.length)) {
      this.dropAborted();
      const parts: { m: Member; tokens: number[] }[] = [];
      let room = this.model.chunk;
      for (const m of this.live) {
        if (room <= 0) break;
        const left = m.prompt.length - m.filled;
        if (left <= 0) continue;
        const take = Math.min(left, room);
        parts.push({ m, tokens: m.prompt.slice(m.filled, m.filled + take) });
        room -= take;
      }
      if (!parts.length) break;
      const started = performance.now();
      const rows = await this.kernels.prefill(parts.map((p) => ({ seq: p.m.seq, tokens: p.tokens })));
      this.passes.prefill++;
      parts.forEach(({ m, tokens: piece }, i) => {
        m.filled += piece.length;
        m.cached += piece.length;
        if (m.filled < m.prompt.length) return;
        this.stepOne(m, () => {
          const p = m.writer.distribution(rows[i]!);
          verifyPass(
            [],
            () => p,
            (t) => (m.sampled++, m.writer.commit(t, m.cached)),
            m.random,
          );
        });
      });
      // As WebLLM's prefill time, the first token's sampling included.
      const took = seconds(started);
      for (const { m } of parts) m.prefillSeconds += took;
      this.settle(parts.map((p) => p.m));
    }
  }

  /**
   * One pass for every member still writing, each with the draft chosen for
   * it (see batch-speculate.ts): a verify pass where any drafts, else a
   * decode pass. Its time runs from the forward to the last member's tokens
   * sampled and committed, as a single request's step is timed.
   */
  private async writePasses() {
    this.costs = batchCosts(this.live.flatMap((m) => m.item.plan?.tuner ?? []));
    while (this.live.length) {
      this.dropAborted();
      if (!this.live.length) break;
      const members = [...this.live];
      const drafts = this.planPass(members);
      const parts = members.map((m, i) => ({ seq: m.seq, tokens: [m.writer.written().at(-1)!, ...drafts[i]!] }));
      const drafted = drafts.reduce((n, d) => n + d.length, 0);
      const started = performance.now();
      const rows = drafted ? await this.kernels.verify(parts) : (await this.kernels.decode(parts)).map((r) => [r]);
      this.passes.write++;
      const passes = members.map((m, i) => this.stepOne(m, () => this.writePass(m, drafts[i]!, rows[i]!)));
      const took = seconds(started);
      members.forEach((m, i) => this.learn(m, drafts[i]!, passes[i], { took, speculating: drafted > 0 }));
      if (drafted) this.costs.observePass(drafted, took);
      else this.costs.observeDecode(took);
      this.settle(members);
    }
  }

  /**
   * Each member's draft for the next pass, chosen together, no more in all
   * than the pass's chunk holds. A member that drafts nothing still offers its
   * draft to its tuner, to be compared with what it writes, as a single
   * request's plain step does.
   */
  private planPass(members: readonly Member[]): (readonly number[])[] {
    const offers = members.map((m) => offerOf(m, this.model.window));
    const ks = chooseDrafts(offers, this.costs);
    let room = this.model.chunk - members.length;
    return members.map((m, i) => {
      const k = Math.max(0, Math.min(ks[i]!, room));
      room -= k;
      const tuner = m.item.plan?.tuner;
      if (!k && tuner && !tuner.shadowing) tuner.shadow(offers[i]!.draft);
      return offers[i]!.draft.slice(0, k);
    });
  }

  /**
   * What a member's tuner learns from a pass it wrote in (not one that failed
   * it): a drafted pass's time and tokens kept, or a decode pass's time. A
   * member that drafted nothing in a verify pass learns no time from it: a
   * verify pass costs more than the decode step it would have taken alone.
   */
  private learn(m: Member, draft: readonly number[], pass: PassResult | undefined, timing: { took: number; speculating: boolean }) {
    m.decodeSeconds += timing.took;
    const tuner = m.item.plan?.tuner;
    if (!pass || !tuner) return;
    // A pass can stop on a kept token: then no drafted token was rejected.
    const rejected = pass.accepted < draft.length && pass.written > pass.accepted;
    if (draft.length) tuner.observePass({ drafted: draft.length, accepted: pass.accepted, rejected, seconds: timing.took });
    else if (!timing.speculating) tuner.observeDecode(timing.took);
  }

  /**
   * Keeps what the acceptance rule keeps of one pass's draft (none: the one
   * token plain decoding writes), and pops the rest from the member's sequence:
   * however it ends, the sequence then holds what plain decoding's would.
   */
  private writePass(m: Member, draft: readonly number[], rows: readonly Float32Array[]): PassResult {
    const base = m.cached;
    const before = m.writer.written().length;
    let written = 0;
    const keep = () => {
      const pass = verifyPass(
        draft,
        (j) => {
          const row = rows[j]!;
          const p = m.writer.distribution(row);
          m.item.plan?.onLogits?.(m.writer.written().length, row);
          return p;
        },
        (t) => (m.sampled++, m.writer.commit(t, base + 1 + written++)),
        m.random,
      );
      m.stats.passes++;
      m.stats.drafted += draft.length;
      m.stats.accepted += pass.accepted;
      this.drafts.drafted += draft.length;
      this.drafts.kept += pass.accepted;
      // A draft offered to the tuner instead is compared with the token written (a stop token is not written).
      if (!draft.length && m.writer.written().length > before) m.item.plan?.tuner?.observeWritten(m.writer.written().at(-1)!);
      return pass;
    };
    // The pass appended the last token and the draft; plain decoding would hold base + written.
    const pop = () => {
      const extra = 1 + draft.length - written;
      if (extra > 0) this.kernels.popn(m.seq, extra);
      m.cached = base + written;
    };
    return cleanUpAfter('Popping a failed pass’s drafts from its sequence', keep, pop);
  }
}

/** A member's offer for the next pass: what its plan drafts, the tokens its cap and the window leave it, and its tuner's kept rates. */
function offerOf(m: Member, window: number): DraftOffer {
  const written = m.writer.written();
  return offerFor(m.item.plan, m.prompt, written, Math.min(m.item.options.maxTokens - written.length, window - m.cached));
}

/** A finished member's result, as the session reports a single request's. */
function resultOf(m: Member): GenerateResult {
  const usage: GenerateResult['usage'] = { promptTokens: m.prompt.length, completionTokens: m.sampled };
  if (m.prefillSeconds > 0) {
    usage.prefillTokensPerSecond = m.prompt.length / m.prefillSeconds;
    usage.timeToFirstTokenSeconds = m.prefillSeconds;
  }
  if (m.decodeSeconds > 0) usage.decodeTokensPerSecond = (m.sampled - 1) / m.decodeSeconds;
  if (m.item.plan) usage.writing = { ...m.stats };
  return { text: m.writer.text(), finishReason: m.writer.finishReason(), usage };
}
