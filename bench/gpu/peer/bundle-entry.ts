/**
 * The peer as bundled by peer/bundle.ts: llama.cpp's side of the GPU
 * benchmark, with every file it reads beside it in the folder launch.mjs
 * unpacked it to (node-llama-cpp under node_modules/ there).
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runPeerCommand } from './peer-command';

const here = dirname(fileURLToPath(import.meta.url));
const manifest = JSON.parse(readFileSync(join(here, 'manifest.json'), 'utf8')) as { library: string };

process.exitCode = await runPeerCommand(process.argv.slice(2), {
  library: join(here, manifest.library),
  tokenizer: join(here, 'tokenizer.json'),
  text: join(here, 'frankenstein.txt'),
  cacheDir: join(tmpdir(), 'memagent-gpu-bench'),
  out: `gpu-peer-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
});
// node-llama-cpp's worker threads can keep the process alive after the run.
process.exit();
