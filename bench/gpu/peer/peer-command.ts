/**
 * The peer on its own (the peer bundle's command): llama.cpp with a made-up
 * GGUF at a WebLLM library's shapes, given the requests of a WebLLM record
 * the GPU bundle wrote (`--against FILE`), and compared with it; without a
 * record, at a size's own request sizes.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { libraryMetadata } from '../../../src/engines/webllm/models/library-metadata';
import { peerGgufPath } from './bench-peer';
import { comparePeer, describeComparison, type WebLLMFigure } from './compare';
import { type PeerBackend, type PeerRequest, runLlamaPeer } from './llama-peer';
import { qwen2ShapeOf } from './qwen2-gguf';

export interface PeerDefaults {
  library: string;
  tokenizer: string;
  text: string;
  cacheDir: string;
  out: string;
}

export const PEER_HELP = `The GPU benchmark's peer: llama.cpp (node-llama-cpp 3.21.1) on this machine, with a made-up 4-bit
(Q4_0) GGUF at the model library's shapes, written here once (nothing is downloaded).

Options:
  --against FILE        a record of the GPU benchmark (gpu-bench-….json): the same requests, and both engines
                        side by side with their ratios (its library must be the one given here)
  --size paper|tiny     without --against: paper (a step of 6,200 tokens in and 1,024 out, and prompts of
                        1,000/2,000/4,000 with 16 out; default) or tiny (28 in, 2 out; one prompt of 12)
  --backend auto|vulkan|cpu  auto (default): llama.cpp's Vulkan build where it loads, else its CPU build
  --threads N           CPU threads (default: 1 on a machine of 2 cores or fewer, else all)
  --library FILE        the WebLLM model library whose shapes the GGUF takes
  --cache-dir DIR       where the GGUF is kept;  --out FILE: the JSON record (default: gpu-peer-<time>.json)
  --tokenizer FILE      Qwen's tokenizer.json;  --text FILE: the book whose tokens fill the prompts
`;

const SIZES: Record<'paper' | 'tiny', { step: PeerRequest; prompts: PeerRequest[] }> = {
  paper: {
    step: { promptTokens: 6200, written: 1024 },
    prompts: [1000, 2000, 4000].map((p) => ({ promptTokens: p, written: 16 })),
  },
  tiny: { step: { promptTokens: 28, written: 2 }, prompts: [{ promptTokens: 12, written: 2 }] },
};

interface WebLLMRecord {
  webllm: string;
  library: { file: string; sha256?: string };
  prompts: WebLLMFigure[];
  step: WebLLMFigure;
}

export async function runPeerCommand(argv: string[], defaults: PeerDefaults): Promise<number> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        against: { type: 'string' },
        size: { type: 'string' },
        backend: { type: 'string' },
        threads: { type: 'string' },
        library: { type: 'string' },
        tokenizer: { type: 'string' },
        text: { type: 'string' },
        'cache-dir': { type: 'string' },
        out: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    log(`${(e as Error).message}\nRun with --help for the options.`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(PEER_HELP);
    return 0;
  }
  const backend = (values.backend ?? 'auto') as PeerBackend;
  const size = values.size ?? 'paper';
  const threads = values.threads === undefined ? undefined : Number(values.threads);
  const usage = !['auto', 'vulkan', 'cpu'].includes(backend)
    ? `--backend must be auto, vulkan or cpu, got "${backend}".`
    : size !== 'paper' && size !== 'tiny'
      ? `--size must be paper or tiny, got "${size}".`
      : threads !== undefined && !(Number.isInteger(threads) && threads >= 1)
        ? `--threads must be a whole number of at least 1, got "${values.threads}".`
        : undefined;
  if (usage) {
    log(`${usage}\nRun with --help for the options.`);
    return 2;
  }
  const o = {
    library: values.library ?? defaults.library,
    tokenizer: values.tokenizer ?? defaults.tokenizer,
    text: values.text ?? defaults.text,
    cacheDir: values['cache-dir'] ?? defaults.cacheDir,
    out: values.out ?? defaults.out,
  };
  try {
    const against = values.against ? (JSON.parse(readFileSync(values.against, 'utf8')) as WebLLMRecord) : undefined;
    const library = new Uint8Array(readFileSync(o.library));
    const sha256 = createHash('sha256').update(library).digest('hex');
    if (against?.library.sha256 && against.library.sha256 !== sha256) {
      throw new Error(`${values.against} measured ${against.library.file}, not ${o.library}: give that library with --library.`);
    }
    const shape = qwen2ShapeOf(libraryMetadata(library));
    const requests = against
      ? {
          step: { promptTokens: against.step.promptTokens, written: against.step.written },
          prompts: against.prompts.map((p) => ({ promptTokens: p.promptTokens, written: p.written })),
        }
      : SIZES[size as 'paper' | 'tiny'];
    const peer = await runLlamaPeer({
      gguf: peerGgufPath(o.cacheDir, library),
      shape,
      tokenizer: o.tokenizer,
      text: o.text,
      ...requests,
      backend,
      ...(threads !== undefined && { threads }),
      log,
    });
    const comparison = against ? comparePeer({ version: against.webllm, prompts: against.prompts, step: against.step }, peer) : undefined;
    const record = {
      kind: 'memagent-gpu-peer',
      when: new Date().toISOString(),
      node: process.version,
      library: o.library.split(/[\\/]/).pop(),
      peer,
      peerComparison: comparison ?? null,
    };
    writeFileSync(o.out, `${JSON.stringify(record, null, 2)}\n`);
    const rate = (n: number) => `${n.toFixed(2)} tokens/s`;
    const lines = [
      `llama.cpp (${peer.runtime}, ${peer.backend}${peer.devices.length ? `: ${peer.devices.join(', ')}` : ''}, ${peer.threads} CPU thread${peer.threads === 1 ? '' : 's'}): ${shape.layers} layers, hidden ${shape.hidden}, vocabulary ${shape.vocab}, Q4_0`,
      `  load              ${peer.load.seconds.toFixed(1)} s (${peer.load.contextSize}-token context, batch ${peer.load.batchSize}, ${peer.load.gpuLayers} layers on the GPU)`,
      ...[...peer.prompts, peer.step].map(
        (p, i) =>
          `  ${i === peer.prompts.length ? 'one step   ' : 'prompt     '} ${String(p.promptTokens).padStart(5)} in, ${p.written} out: prefill ${rate(p.prefillTokensPerSecond)}, decode ${rate(p.decodeTokensPerSecond)}, first token after ${p.timeToFirstTokenSeconds} s`,
      ),
      ...(comparison ? [describeComparison(comparison)] : []),
      `  record            ${o.out}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  } catch (e) {
    log(e instanceof Error ? e.message : String(e));
    return 1;
  }
}
