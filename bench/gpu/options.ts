/**
 * What the GPU benchmark measures, and at which sizes. The sizes are
 * MemAgent's own on a real GPU (`paper`), and a few tokens on a software
 * adapter (`tiny`), where each token takes seconds: `auto` picks by the
 * adapter.
 */
import { parseArgs } from 'node:util';
import { MAX_SEED } from '../../src/core/plan';

export interface Shape {
  /** Tokens of book text in the step's section. */
  chunk: number;
  /** Tokens of memory in the step's prompt. */
  memory: number;
  /** The step's reply cap (MemAgent's memory size): up to this many tokens written. */
  write: number;
  /** Prompt sizes, in tokens, for seeing how prefill scales. */
  prompts: number[];
  /** Tokens written after each of those prompts. */
  promptWrite: number;
  /** The app's prompt templates and ChatML, or a tiny template and no chat markers: a step's prompt of a few tokens. */
  templates: 'app' | 'tiny';
}

export const SHAPES: Readonly<Record<'paper' | 'tiny', Shape>> = {
  // A 5,000-token chunk and a 1,024-token memory in the app's template, up to 1,024 written: one step of the paper.
  paper: { chunk: 5000, memory: 1024, write: 1024, prompts: [1000, 2000, 4000], promptWrite: 16, templates: 'app' },
  // SwiftShader reads about a token a second and writes one in ten: a few of each.
  tiny: { chunk: 4, memory: 2, write: 2, prompts: [4], promptWrite: 2, templates: 'tiny' },
};

export interface BenchOptions {
  size: 'auto' | 'paper' | 'tiny';
  /** Overrides of the chosen size's shape. */
  shape: Partial<Shape>;
  /** The model library (.wasm) whose kernels are measured. */
  library: string;
  /** Qwen's tokenizer.json, and the tokenizer_config.json beside it. */
  tokenizer: string;
  /** The book whose text fills the section and the memory. */
  text: string;
  /** The folder that plays Cache Storage; the made-up weights are written there once per library. */
  cacheDir: string;
  /** The JSON record's path. */
  out: string;
  webllm?: string;
  bandwidthGbps?: number;
  /** Speculative writing beside the plain step: off, or modes as speculate.ts reads them. */
  speculate?: string;
  /** Drafted tokens per pass (K), fixed; absent, ngram chooses K per pass. */
  draft?: number;
  /** Dawn toggles to turn on (`!NAME` turns one off). */
  dawnToggles?: string[];
  /** Where to write a V8 CPU profile of the measured part. */
  cpuProfile?: string;
  /** Also measure llama.cpp on the same requests (bench/gpu/peer/). */
  peer?: boolean;
  /** Print the suite's table: the plain step beside the speculative modes, with their ratios. */
  suite?: boolean;
  /** Also write the step for this many questions, one after another and as one batch (batch.ts). */
  questions?: number;
  /** --temperature, --top-p, --seed: how the step, the speculative modes and the batches sample (see benchSampling). */
  temperature?: number;
  topP?: number;
  seed?: number;
}

/** How the benchmark's requests sample: one seed for the read, each question's own from it (questionSeed). */
export interface BenchSampling {
  temperature: number;
  topP: number;
  seed: number;
}

/** The options' sampling for the speculative modes and the batches: temperature 0 unless given, top-p 0.95, seed 1. */
export function benchSampling(o: Pick<BenchOptions, 'temperature' | 'topP' | 'seed'>): BenchSampling {
  return { temperature: o.temperature ?? 0, topP: o.topP ?? 0.95, seed: o.seed ?? 1 };
}

/** What --suite writes for several questions: 1, 2 and 4 of them, greedy and at the paper's sampling. */
export const SUITE_QUESTIONS = [1, 2, 4] as const;
export const SUITE_SAMPLINGS: readonly Omit<BenchSampling, 'seed'>[] = [
  { temperature: 0, topP: 0.95 },
  { temperature: 0.7, topP: 0.95 },
];

/** What --suite measures beside the plain step. */
export const SUITE_MODES = 'ngram,oracle';

export class BenchUsageError extends Error {
  override name = 'BenchUsageError';
}

export const BENCH_HELP = `GPU benchmark: WebLLM's real kernels on this machine's GPU (Dawn for node), with weights made up
from the model library's own metadata (nothing is downloaded).

Options:
  --library FILE        the WebLLM model library (.wasm) to measure
  --size auto|paper|tiny  paper: a 5,000-token chunk + 1,024-token memory + the app's template, up to
                        1,024 written, and prompts of 1,000/2,000/4,000 tokens; tiny: a few tokens, with no
                        chat markers around them (for a software GPU); auto (default): tiny on a software
                        adapter, paper otherwise
  --chunk N  --memory N  --write N  --prompts N,N,…  --prompt-write N  --templates app|tiny
                        change one part of the chosen size
  --webllm VERSION      the WebLLM runtime: 0.2.86 or 0.2.79 (default: the one the library was built for, from
                        its folder or its imports; each runs only its own libraries)
  --dawn-toggle NAME    turn on one of Dawn's toggles (repeatable; !NAME turns one off), e.g.
                        vulkan_enable_f16_on_nvidia; the record keeps the adapter's features with and without
  --cpu-profile FILE    write a V8 CPU profile (.cpuprofile) of the measured part
  --peer                also run llama.cpp (node-llama-cpp; Vulkan where it loads, else its CPU build) on the
                        same requests with a made-up 4-bit GGUF of the library's shapes, and compare
  --bandwidth-gbps N    the device's memory bandwidth, where its name is not in the table of known GPUs
  --cache-dir DIR       where the made-up weights are cached (default: the system's temporary folder)
  --out FILE            the JSON record (default: gpu-bench-<time>.json here)
  --tokenizer FILE      Qwen's tokenizer.json;  --text FILE: the book that fills the prompts
  --speculate MODE      off (default), ngram, oracle or partial:R, or a comma list (oracle,ngram): beside the
                        plain step, its prompt written at temperature 0 plainly and speculatively in each mode
  --suite               the step, then --speculate ngram,oracle (no prompt series unless --prompts), and one
                        table of step seconds, decode tokens/s, passes per token and each one's ratio to plain;
                        then 1, 2 and 4 questions of a shorter prompt, one by one and batched, with the first
                        mode, at temperature 0 and at 0.7 / top-p 0.95
  --questions N         also write the step for N questions (at least 2) at temperature 0, one after another and
                        then as one batch (one KV-cache sequence each): seconds, passes, tokens per pass each way,
                        and each question's tokens; with --speculate, both ways write with its first mode. The step
                        is then written at temperature 0, and without --speculate it is the first question's reply
  --temperature T       sampling temperature, 0 to 2, for the step, the speculative modes and the batches
                        (default 0; the step alone, without --suite or --questions, 0.7)
  --top-p P             top-p, above 0 and at most 1 (default 0.95)
  --seed N              the read's seed, 0 to ${MAX_SEED} (default 1): the step and the first question sample with it,
                        each other question with its own seed made from it, as a read of several questions does
  --draft K             drafted tokens per pass, fixed, in every mode; without it each mode chooses K (0, a plain
                        decode step, to 32) before each pass from what its passes measured, as the app does
`;

function whole(name: string, value: string | undefined, min = 1): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new BenchUsageError(`--${name} must be a whole number of at least ${min}, got "${value}".`);
  return n;
}

/** The command line's options over `defaults` (the paths that differ between the checkout and the bundle). */
export function parseBenchArgs(argv: string[], defaults: Pick<BenchOptions, 'library' | 'tokenizer' | 'text' | 'cacheDir' | 'out'>): BenchOptions | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        size: { type: 'string' },
        library: { type: 'string' },
        tokenizer: { type: 'string' },
        text: { type: 'string' },
        'cache-dir': { type: 'string' },
        out: { type: 'string' },
        webllm: { type: 'string' },
        'dawn-toggle': { type: 'string', multiple: true },
        'cpu-profile': { type: 'string' },
        'bandwidth-gbps': { type: 'string' },
        peer: { type: 'boolean' },
        chunk: { type: 'string' },
        memory: { type: 'string' },
        write: { type: 'string' },
        prompts: { type: 'string' },
        'prompt-write': { type: 'string' },
        templates: { type: 'string' },
        speculate: { type: 'string' },
        draft: { type: 'string' },
        questions: { type: 'string' },
        suite: { type: 'boolean' },
        temperature: { type: 'string' },
        'top-p': { type: 'string' },
        seed: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    throw new BenchUsageError((e as Error).message);
  }
  if (values.help) return 'help';
  const size = values.size ?? 'auto';
  if (size !== 'auto' && size !== 'paper' && size !== 'tiny') throw new BenchUsageError(`--size must be auto, paper or tiny, got "${size}".`);
  const shape: Partial<Shape> = {};
  const set = <K extends keyof Shape>(key: K, value: Shape[K] | undefined) => value !== undefined && (shape[key] = value);
  set('chunk', whole('chunk', values.chunk));
  set('memory', whole('memory', values.memory));
  set('write', whole('write', values.write));
  set('promptWrite', whole('prompt-write', values['prompt-write'], 2));
  if (values.prompts !== undefined)
    set(
      'prompts',
      values.prompts.split(',').map((p) => whole('prompts', p.trim())!),
    );
  if (values.templates !== undefined) {
    if (values.templates !== 'app' && values.templates !== 'tiny') throw new BenchUsageError(`--templates must be app or tiny, got "${values.templates}".`);
    shape.templates = values.templates;
  }
  // The suite measures the step and its speculative writing only: the prompt series is left out unless asked for.
  if (values.suite && shape.prompts === undefined) shape.prompts = [];
  const bandwidth = values['bandwidth-gbps'];
  const gbps = bandwidth === undefined ? undefined : Number(bandwidth);
  if (gbps !== undefined && !(gbps > 0)) throw new BenchUsageError(`--bandwidth-gbps must be a positive number, got "${bandwidth}".`);
  return {
    size,
    shape,
    library: values.library ?? defaults.library,
    tokenizer: values.tokenizer ?? defaults.tokenizer,
    text: values.text ?? defaults.text,
    cacheDir: values['cache-dir'] ?? defaults.cacheDir,
    out: values.out ?? defaults.out,
    ...(values.webllm !== undefined && { webllm: values.webllm }),
    ...(gbps !== undefined && { bandwidthGbps: gbps }),
    // The suite: the plain step and the step written speculatively with the app's drafts and with the oracle's.
    ...((values.speculate !== undefined || values.suite) && { speculate: values.speculate ?? SUITE_MODES }),
    ...(values.suite && { suite: true }),
    ...(values.draft !== undefined && { draft: whole('draft', values.draft) }),
    ...(values['dawn-toggle'] !== undefined && { dawnToggles: values['dawn-toggle'] }),
    ...(values['cpu-profile'] !== undefined && { cpuProfile: values['cpu-profile'] }),
    ...(values.peer && { peer: true }),
    ...(values.questions !== undefined && { questions: whole('questions', values.questions, 2) }),
    ...samplingFlags(values),
  };
}

/** --temperature, --top-p and --seed, each checked against the range a read takes. */
function samplingFlags(values: { temperature?: string; 'top-p'?: string; seed?: string }): Pick<BenchOptions, 'temperature' | 'topP' | 'seed'> {
  const out: Pick<BenchOptions, 'temperature' | 'topP' | 'seed'> = {};
  const number = (name: string, value: string) => {
    const n = value.trim() === '' ? NaN : Number(value);
    if (!Number.isFinite(n)) throw new BenchUsageError(`--${name} must be a number, got "${value}".`);
    return n;
  };
  if (values.temperature !== undefined) {
    out.temperature = number('temperature', values.temperature);
    if (out.temperature < 0 || out.temperature > 2) throw new BenchUsageError(`--temperature must be from 0 to 2, got "${values.temperature}".`);
  }
  if (values['top-p'] !== undefined) {
    out.topP = number('top-p', values['top-p']);
    if (!(out.topP > 0 && out.topP <= 1)) throw new BenchUsageError(`--top-p must be above 0 and at most 1, got "${values['top-p']}".`);
  }
  if (values.seed !== undefined) {
    const seed = whole('seed', values.seed, 0)!;
    if (seed > MAX_SEED) throw new BenchUsageError(`--seed must be a whole number from 0 to ${MAX_SEED}, got "${values.seed}".`);
    out.seed = seed;
  }
  return out;
}

/** The shape a run measures: its size's, with the options' overrides. */
export function shapeOf(size: 'paper' | 'tiny', overrides: Partial<Shape>): Shape {
  return { ...SHAPES[size], ...overrides };
}
