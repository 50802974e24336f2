/**
 * What `memagent eval` needs to read by InfMem's method: which methods
 * `--method` names, the InfMem flags (early stop, thinking, the pinned
 * files), and the steps for each document: the extractive engine's
 * stand-ins, or a server's raw completions through the official prompts.
 */
import type { InfmemSteps } from '../core/infmem/loop';
import { modelSteps } from '../core/infmem/loop';
import { DEFAULT_EARLY_STOP } from '../core/infmem/planner-state';
import type { InfmemDocument } from '../core/infmem/retrieval';
import { extractiveInfmemSteps } from '../engines/extractive/infmem-steps';
import { openAIConfig } from '../engines/openai/http';
import { openRawCompletions } from '../engines/openai/completions';
import { loadQwenTokenizer, type QwenTokenizer } from '../engines/qwen-tokenizer';
import type { EvalMethod } from '../eval/infmem-read';
import type { MethodId } from '../eval/method';
import type { ServerFlags } from './engine';
import { seconds } from './engine';
import { UsageError, wholeNumber } from './flags';
import { type InfmemFileEnvironment, resolveInfmemPrompts } from './infmem-files';

/** eval's flags for InfMem. */
export const EVAL_INFMEM_OPTIONS = {
  'early-stop': { type: 'string' },
  thinking: { type: 'string' },
  'infmem-file': { type: 'string' },
  'infmem-base': { type: 'string' },
  'fncall-file': { type: 'string' },
  'fncall-base': { type: 'string' },
} as const;

export interface EvalInfmemFlags extends ServerFlags {
  method?: string;
  'early-stop'?: string;
  thinking?: string;
  'infmem-file'?: string;
  'infmem-base'?: string;
  'fncall-file'?: string;
  'fncall-base'?: string;
  temperature?: string;
  'top-p'?: string;
}

/** The methods `--method` names, and for MemAgent on --data the paper's answer style if one was named. */
export interface EvalMethods {
  methods: EvalMethod[];
  /** recurrent or recurrent-boxed, where --method named one (MemAgent's paper method, --data only). */
  style?: MethodId;
}

/**
 * `--method memagent|infmem|both` (MemAgent's by default); with --data also
 * `recurrent` or `recurrent-boxed`, MemAgent's two answer styles.
 */
export function evalMethodsOf(value: string | undefined, data: boolean): EvalMethods {
  if (value === undefined || value === 'memagent') return { methods: ['memagent'] };
  if (value === 'infmem') return { methods: ['infmem'] };
  if (value === 'both') return { methods: ['memagent', 'infmem'] };
  if (value === 'recurrent' || value === 'recurrent-boxed') {
    if (!data) throw new UsageError(`--method ${value} goes with --data: it is the paper's way of reading RULER-HotpotQA files' answers.`);
    return { methods: ['memagent'], style: value };
  }
  throw new UsageError(
    `--method is memagent (the default), infmem or both${data ? ' (or recurrent, recurrent-boxed: MemAgent with the paper’s answer style)' : ''}, not "${value}".`,
  );
}

/** InfMem's flags given without InfMem: refused rather than ignored. */
export function refuseInfmemFlags(v: EvalInfmemFlags): void {
  const given = Object.keys(EVAL_INFMEM_OPTIONS).filter((k) => v[k as keyof EvalInfmemFlags] !== undefined);
  if (given.length) throw new UsageError(`--${given.join(', --')} ${given.length === 1 ? 'is' : 'are'} for InfMem: add --method infmem or --method both.`);
}

export interface InfmemEvalSettings {
  earlyStop: number;
  thinking: boolean;
}

export function infmemSettingsOf(v: EvalInfmemFlags): InfmemEvalSettings {
  const thinking = v.thinking ?? 'on';
  if (thinking !== 'on' && thinking !== 'off') throw new UsageError(`--thinking is on (the default, as InfMem's evaluation runs) or off, not "${thinking}".`);
  return { earlyStop: wholeNumber('early-stop', v['early-stop'], 1) ?? DEFAULT_EARLY_STOP, thinking: thinking === 'on' };
}

/** The steps for each document, with Qwen's tokenizer that cuts the documents, and a line that says what reads. */
export interface InfmemReader {
  about: string;
  codec: QwenTokenizer;
  stepsFor(document: InfmemDocument, signal?: AbortSignal): InfmemSteps;
}

function unit(flag: string, value: string | undefined, fallback: number, max?: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || (max !== undefined && n > max)) {
    throw new UsageError(`--${flag} must be a number from 0${max !== undefined ? ` to ${max}` : ''}, got "${value}".`);
  }
  return n;
}

export interface InfmemReaderIo {
  say(line: string): void;
  environment?: InfmemFileEnvironment;
  /** true for dataset files (each request the official code's, byte for byte); false for generated tasks, read as a book is, control strings inert. */
  verbatim: boolean;
}

/** Says `line` the first time it is called, and never again. */
function sayOnce(say: (line: string) => void, line: string): () => void {
  let said = false;
  return () => {
    if (!said) say(line);
    said = true;
  };
}

/**
 * InfMem's reader for the engine the flags name: the extractive engine's
 * stand-ins, or the server at --base-url through its raw completions. Other
 * engines cannot continue a half-written turn, which thinking needs.
 */
export async function openInfmemReader(v: EvalInfmemFlags, engineId: string, settings: InfmemEvalSettings, io: InfmemReaderIo): Promise<InfmemReader> {
  const codec = await loadQwenTokenizer();
  const early = `InfMem, early stop ${settings.earlyStop}`;
  if (engineId === 'extractive') {
    return {
      about: `${early}: the extractive engine's stand-ins for the planner and the writer (fixed rules, no model)`,
      codec,
      stepsFor: (document) => extractiveInfmemSteps(document, codec),
    };
  }
  if (!v['base-url']) {
    throw new UsageError(
      `InfMem reads with the extractive engine or a server (--base-url) that answers /v1/completions; --engine ${engineId} cannot continue a raw prompt. Leave out --method infmem/both, or give --base-url.`,
    );
  }
  const prompts = await resolveInfmemPrompts(
    { 'prompts-file': v['infmem-file'], 'prompts-base': v['infmem-base'], 'fncall-file': v['fncall-file'], 'fncall-base': v['fncall-base'] },
    io.environment ?? {},
  );
  const retries = wholeNumber('retries', v.retries);
  const delay = wholeNumber('retry-delay', v['retry-delay']);
  const config = openAIConfig(
    { baseUrl: v['base-url'], ...(v.model && { model: v.model }) },
    v['api-key'] ?? process.env.MEMAGENT_API_KEY ?? process.env.OPENAI_API_KEY,
  );
  const server = await openRawCompletions(config, {
    ...(io.environment?.fetch && { fetch: io.environment.fetch }),
    retry: { ...(retries !== undefined && { maxRetries: retries }), ...(delay !== undefined && { baseDelayMs: delay }) },
    onRetry: (n) => io.say(`  ${n.reason} Retrying in ${seconds(n.delayMs)} (retry ${n.attempt}).`),
  });
  const temperature = unit('temperature', v.temperature, 0);
  const topP = unit('top-p', v['top-p'], 1, 1);
  const onInert = sayOnce(
    io.say,
    '  Chat-template control strings in a sample were made inert before they were sent; the official code sends them as they are.',
  );
  return {
    about: `${early}, thinking ${settings.thinking ? 'on' : 'off'}, temperature ${temperature}, top p ${topP}: ${server.model} at ${server.baseUrl}/completions; prompts: ${prompts.sources.infmem}, function calls: ${prompts.sources.fncall}`,
    codec,
    stepsFor: (_document, signal) =>
      modelSteps({
        ...prompts,
        completer: server.completer,
        chat: { family: 'qwen3' },
        thinking: settings.thinking,
        temperature,
        topP,
        signal,
        verbatim: io.verbatim,
        onInert,
      }),
  };
}
