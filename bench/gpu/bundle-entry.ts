/**
 * The benchmark as bundled by bundle.ts: WebLLM 0.2.86 (what the app ships)
 * and 0.2.79 (for the `v0_2_48` libraries), both made to run in node when the
 * bundle is built, and every file it reads beside it, in the folder
 * launch.mjs unpacked it to. The library measured picks the runtime.
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WEBLLM_0_2_79, WEBLLM_0_2_86, type WebLLMVersion } from '../../src/engines/webllm/versions';
import type { WebLLMModule } from '../../src/engines/webllm/node/webllm-module';
import { runBenchCommand } from './command';

const here = dirname(fileURLToPath(import.meta.url));
const manifest = JSON.parse(readFileSync(join(here, 'manifest.json'), 'utf8')) as { library: string };

async function load(version: WebLLMVersion): Promise<WebLLMModule> {
  // Each import is evaluated only when asked for: a run loads one runtime.
  if (version.version === WEBLLM_0_2_86.version) return (await import('@mlc-ai/web-llm')) as unknown as WebLLMModule;
  if (version.version === WEBLLM_0_2_79.version) return (await import('@mlc-ai/web-llm-0279')) as unknown as WebLLMModule;
  throw new Error(`This bundle carries WebLLM ${WEBLLM_0_2_86.version} and ${WEBLLM_0_2_79.version}, not ${version.version}.`);
}

process.exitCode = await runBenchCommand(process.argv.slice(2), {
  defaults: {
    library: join(here, manifest.library),
    tokenizer: join(here, 'tokenizer.json'),
    text: join(here, 'frankenstein.txt'),
    cacheDir: join(tmpdir(), 'memagent-gpu-bench'),
    out: `gpu-bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
  },
  load,
  dawnAddon: join(here, 'dawn.node'),
});
process.exit();
