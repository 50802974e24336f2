/**
 * llama.cpp (WebAssembly) in Chromium: tokens per second with one thread
 * against all of this machine's cores, on the tiny GGUF fixture, in one run.
 * The page is cross-origin isolated, as multithreading needs.
 */
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { chromium } from '@playwright/test';
import { FIXTURES_DIR, serveFiles } from '../test/support/serve-fixtures';

const WLLAMA_ESM = fileURLToPath(new URL('../node_modules/@wllama/wllama/esm/', import.meta.url));
// The measurement runs in the page, as plain JavaScript.
const PAGE = `<!doctype html><script type="module">
import { Wllama } from '/wllama/index.js';
window.bench = async (threads, reps, maxTokens, model) => {
  const w = new Wllama({ default: '/wllama/wasm/wllama.wasm' }, { suppressNativeLog: true });
  w.setCompat(null);
  await w.loadModelFromUrl(model, { n_ctx: 2048, n_threads: threads, n_gpu_layers: 0, n_parallel: 1 });
  const prompt = 'The river ran wide and slow past the mill, and the miller counted the sacks twice. '.repeat(20);
  const request = { messages: [{ role: 'user', content: prompt }], max_tokens: maxTokens, ignore_eos: true, cache_prompt: false };
  await w.createChatCompletion(request); // warm-up
  const decode = [];
  const prefill = [];
  for (let i = 0; i < reps; i++) {
    const t = (await w.createChatCompletion(request)).timings;
    decode.push(t.predicted_per_second);
    prefill.push(t.prompt_per_second);
  }
  const result = { threads: w.getNumThreads(), multithread: w.isMultithread(), decode, prefill };
  await w.exit();
  return result;
};
window.ready = true;
</script>`;

interface Sample {
  threads: number;
  multithread: boolean;
  decode: number;
  prefill: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function wllamaBench(options: { reps?: number; maxTokens?: number } = {}): Promise<void> {
  const reps = options.reps ?? 5;
  const load = loadavg()[0]!;
  const maxTokens = options.maxTokens ?? 128;
  const executablePath = process.env.CHROMIUM_PATH ?? ['/usr/lib/chromium/chromium', '/usr/bin/chromium'].find((p) => existsSync(p));
  const server = await serveFiles({ port: 0, roots: { '/wllama/': WLLAMA_ESM, '/fixtures/': FIXTURES_DIR }, pages: { '/': PAGE }, isolate: true });
  const browser = await chromium.launch({ executablePath });
  try {
    const page = await browser.newPage();
    await page.goto(`${server.url}/`);
    await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
    const cores = await page.evaluate(() => navigator.hardwareConcurrency);
    if (!(await page.evaluate(() => crossOriginIsolated))) throw new Error('The benchmark page is not cross-origin isolated.');
    const threads = cores > 1 ? [1, cores] : [1];
    const samples: Sample[] = [];
    for (const n of threads) {
      samples.push(
        await page
          .evaluate(
            ([n, reps, maxTokens, model]) =>
              (window as unknown as { bench(...a: unknown[]): Promise<{ threads: number; multithread: boolean; decode: number[]; prefill: number[] }> }).bench(
                n,
                reps,
                maxTokens,
                model,
              ),
            [n, reps, maxTokens, `${server.url}/fixtures/llama-2-tiny-random.gguf`] as const,
          )
          .then((r) => ({ threads: r.threads, multithread: r.multithread, decode: median(r.decode), prefill: median(r.prefill) })),
      );
    }
    const base = samples[0]!;
    console.log(`llama.cpp (WebAssembly) in Chromium, tiny GGUF fixture: median of ${reps} runs, a 20-sentence prompt, ${maxTokens} tokens written`);
    // Threads contend with everything else on the machine: the load says how much was running.
    console.log(`  ${cpus().length} cores, load average ${load.toFixed(1)} before the run`);
    for (const s of samples) {
      const ratio = s === base ? '' : `  (${(s.decode / base.decode).toFixed(2)}x writing, ${(s.prefill / base.prefill).toFixed(2)}x reading vs 1 thread)`;
      console.log(
        `  ${String(s.threads).padStart(2)} thread${s.threads === 1 ? ' ' : 's'}${s.multithread ? ' (multithreaded build)' : '                      '}` +
          `  writing ${s.decode.toFixed(1).padStart(7)} tokens/s  reading ${s.prefill.toFixed(0).padStart(6)} tokens/s${ratio}`,
      );
    }
    if (samples.length === 1) console.log('  (one core: no multithreaded figure)');
  } finally {
    await browser.close();
    await server.close();
  }
}
