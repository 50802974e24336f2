/**
 * Real generation on a real GPU, which CI cannot do: the app's WebLLM engine
 * (our downloader, WebLLM's MLCEngine, the model's own tokenizer) reads three
 * chunks of a planted text with the MemAgent loop, answers, and stops on
 * Cancel. Open /bench/webllm-check.html from `npm run dev`.
 */
import { chunkAll } from '../src/core/chunker';
import { memoryLoop } from '../src/core/loop';
import { DEFAULT_TEMPLATES, templateOverhead, updatePrompt } from '../src/core/prompts';
import type { EngineConfig } from '../src/engines/engine';
import { checkWebGPU } from '../src/engines/webllm/check/webgpu';
import { createWebLLMEngine } from '../src/engines/webllm/engine';
import { session } from '../src/engines/webllm/gpu-session';
import { onModelProgress } from '../src/engines/webllm/models/models';

const NEEDLE = 'The vault code for the Marlowe archive is 4829137.';
const QUESTION = 'What is the vault code for the Marlowe archive?';
const NOISE = 'The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. ';

const log = document.getElementById('log')!;
const verdict = document.getElementById('verdict')!;
const say = (line: string) => {
  log.textContent += `${line}\n`;
  console.log(line);
};

function configFromUrl(): EngineConfig {
  const q = new URLSearchParams(location.search);
  const modelUrl = q.get('modelUrl');
  const libUrl = q.get('libUrl');
  if (modelUrl && libUrl) {
    return { model: 'custom:check', label: 'custom model', modelUrl, libUrl, contextLimit: Number(q.get('contextLimit') ?? 32768) };
  }
  return { model: q.get('model') ?? 'Qwen2.5-0.5B-Instruct-q4f16_1-MLC' };
}

export interface CheckResult {
  ok: boolean;
  failures: string[];
  steps: { promptTokens: number; ourTokens: number; completionTokens: number; finishReason: string; prefill?: number; decode?: number; ttft?: number }[];
  answer?: string;
  abortMs?: number;
  error?: string;
}

async function check(): Promise<CheckResult> {
  const result: CheckResult = { ok: false, failures: [], steps: [] };
  const gpu = await checkWebGPU();
  say(`WebGPU: ${gpu.status}, adapter ${gpu.adapter}, shader-f16 ${gpu.shaderF16}, fallback ${gpu.fallback}`);
  if (gpu.status !== 'ok') throw new Error(gpu.message ?? 'no WebGPU');
  const stop = onModelProgress((p) => say(`  ${p.phase} ${Math.round(100 * p.fraction)}% ${p.text}`));
  const engine = await createWebLLMEngine(configFromUrl());
  say(`model ${engine.model.id}, limit ${engine.limit}, chat template ≈ ${engine.overhead} tokens`);

  // Three chunks of 1,000 tokens, the fact in the second.
  const filler = NOISE.repeat(60);
  const text = `${filler}${filler}${NEEDLE} ${filler}${filler}${filler}`;
  const chunks = chunkAll(text, engine.tokenizer, 1000).slice(0, 3);
  const memoryTokens = 256;
  const contextTokens =
    templateOverhead(DEFAULT_TEMPLATES.update, (s) => engine.tokenizer.count(s)) + engine.tokenizer.count(QUESTION) + 2 * memoryTokens + 1000;
  const t0 = performance.now();
  await engine.prepare(contextTokens);
  say(`loaded with a ${session.current?.window}-token window in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  let memory = 'No previous memory';
  const loop = memoryLoop({
    text,
    chunks,
    question: QUESTION,
    generator: engine,
    templates: DEFAULT_TEMPLATES,
    memoryTokens,
    sampling: { temperature: 0.7, topP: 0.95, seed: 1 },
  });
  for await (const e of loop) {
    const u = e.result.usage;
    if (e.kind === 'revision') {
      const prompt = updatePrompt(DEFAULT_TEMPLATES, QUESTION, memory, text.slice(chunks[e.index]!.start, chunks[e.index]!.end));
      const ours = engine.tokenizer.count(prompt);
      memory = e.memory;
      result.steps.push({
        promptTokens: u.promptTokens,
        ourTokens: ours,
        completionTokens: u.completionTokens,
        finishReason: e.result.finishReason,
        prefill: u.prefillTokensPerSecond,
        decode: u.decodeTokensPerSecond,
        ttft: u.timeToFirstTokenSeconds,
      });
      say(
        `chunk ${e.index + 1}: ${u.promptTokens} prompt tokens (ours ${ours} + template), ${u.completionTokens} written, ${e.result.finishReason}, ` +
          `prefill ${u.prefillTokensPerSecond?.toFixed(0)} tok/s, decode ${u.decodeTokensPerSecond?.toFixed(1)} tok/s, first token ${u.timeToFirstTokenSeconds?.toFixed(2)} s`,
      );
      say(`  memory: ${e.memory.slice(0, 400)}`);
      // The model's count of the prompt is ours plus the chat template, the same few tokens every step.
      if (u.promptTokens - ours < 0 || u.promptTokens - ours > engine.overhead)
        result.failures.push(`chunk ${e.index + 1}: WebLLM counted ${u.promptTokens} prompt tokens, ours ${ours}`);
      if (u.completionTokens > memoryTokens) result.failures.push(`chunk ${e.index + 1}: wrote ${u.completionTokens} tokens past the ${memoryTokens} cap`);
    } else {
      result.answer = e.answer;
      say(`answer: ${e.reply}`);
      if (!e.answer.includes('4829137')) result.failures.push('the answer lacks the planted code 4829137 (a small model may miss it; try the 7B)');
    }
  }

  // Cancel: a long reply stopped after its first token.
  const controller = new AbortController();
  let stoppedAt = 0;
  const long = engine.generate([{ role: 'user', content: 'Count from 1 to 500, one number a line.' }], {
    maxTokens: 1024,
    signal: controller.signal,
    onToken: () => {
      if (!controller.signal.aborted) {
        stoppedAt = performance.now();
        controller.abort();
      }
    },
  });
  const stopped = await long;
  result.abortMs = performance.now() - stoppedAt;
  say(`Cancel: finish ${stopped.finishReason} ${result.abortMs.toFixed(0)} ms after the abort, ${stopped.usage.completionTokens} tokens written`);
  if (stopped.finishReason !== 'abort') result.failures.push(`Cancel ended with ${stopped.finishReason}, not abort`);
  if (result.abortMs > 2000) result.failures.push('Cancel took longer than 2 s');
  stop();
  result.ok = result.failures.length === 0;
  return result;
}

async function main(): Promise<void> {
  log.textContent = '';
  let result: CheckResult;
  try {
    result = await check();
  } catch (e) {
    const err = e as Error;
    say(`${err.name}: ${err.message}`);
    result = { ok: false, failures: [err.message], steps: [], error: `${err.name}: ${err.message}` };
  }
  verdict.textContent = result.ok ? 'PASS' : `FAIL: ${result.failures.join('; ')}`;
  verdict.className = result.ok ? 'pass' : 'fail';
  (window as unknown as { checkResult: CheckResult }).checkResult = result;
}

document.getElementById('start')!.addEventListener('click', () => void main());
if (new URLSearchParams(location.search).has('auto')) void main();
