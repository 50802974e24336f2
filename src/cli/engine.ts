/**
 * The engine and the prompts the flags choose, opened once for either
 * command, and the words that describe them before anything is read.
 */
import type { PromptRecord } from '../core/prompt-sets';
import type { Engine, EngineConfig } from '../engines/engine';
import { EngineSettingsError } from '../engines/errors';
import { OpenAIEngine } from '../engines/openai/engine';
import { isRequestsAtOnce, OPENAI_INFO, REQUESTS_AT_ONCE } from '../engines/openai/info';
import type { RetryNotice } from '../engines/openai/retry';
import { createEngine, ENGINES } from '../engines/registry';
import { configModel, memagentProblem } from '../engines/webllm/models/models';
import { UsageError, wholeNumber } from './flags';
import { describeGpuEngine, gpuConfigOf, openGpuEngine, versionOf } from './gpu-engine';
import { type PromptFlags, PromptOptionError, promptSetName, type ResolvedPrompts, resolveCliPrompts } from './prompts';

export interface ServerFlags {
  'base-url'?: string;
  model?: string;
  'api-key'?: string;
  context?: string;
  retries?: string;
  'retry-delay'?: string;
  engine?: string;
  'model-url'?: string;
  'model-lib'?: string;
  'cache-dir'?: string;
  webllm?: string;
  speculate?: string;
  /** read's own: the most requests at a server at once with several questions. */
  'in-flight'?: string;
}

/** The engine the flags name: --engine, or openai with --base-url. */
export function engineIdOf(v: ServerFlags): string {
  const id = v.engine ?? (v['base-url'] ? 'openai' : undefined);
  if (!id) {
    throw new UsageError(
      'Give --base-url, the address of an OpenAI-compatible server (e.g. http://127.0.0.1:8000/v1), --engine webllm to run a model on this machine’s GPU, or --engine extractive to try the loop without a model.',
    );
  }
  if (!ENGINES.some((e) => e.id === id)) throw new UsageError(`Unknown engine "${id}". Engines: ${ENGINES.map((e) => e.id).join(', ')}.`);
  return id;
}

/**
 * The flags with `id` as their engine where they name none (no --engine,
 * --base-url or --model: a model named with no way to reach it is still
 * refused); null where they name one.
 */
export function withDefaultEngine<T extends ServerFlags>(v: T, id: string): T | null {
  return v.engine === undefined && v['base-url'] === undefined && v.model === undefined ? { ...v, engine: id } : null;
}

/** Checks the engine flags before anything slow is done: a mistake is said at once. */
export function engineConfigOf(v: ServerFlags): { id: string; config: EngineConfig; retry: { maxRetries?: number; baseDelayMs?: number } } {
  const id = engineIdOf(v);
  // A bound on requests at a server means nothing to an engine on this machine: said rather than ignored.
  if (v['in-flight'] !== undefined && id !== OPENAI_INFO.id) throw new UsageError('--in-flight is for a server (--base-url).');
  if (id === 'webllm') {
    versionOf(v);
    const config = gpuConfigOf(v);
    // Said before a model is downloaded: a Qwen3 model reads with --method infmem only.
    const problem = memagentProblem(configModel(config));
    if (problem) throw new UsageError(`${problem} (memagent read --method infmem --engine webllm)`);
    return { id, config, retry: {} };
  }
  for (const flag of ['model-url', 'model-lib', 'cache-dir', 'webllm', 'speculate'] as const) {
    if (v[flag] !== undefined) throw new UsageError(`--${flag} is for --engine webllm.`);
  }
  const config: Record<string, string | number> = {};
  if (v['base-url']) config.baseUrl = v['base-url'];
  if (v.model) config.model = v.model;
  const context = wholeNumber('context', v.context, 1);
  if (context) config.contextWindow = context;
  const atOnce = requestsAtOnceOf(v['in-flight']);
  if (atOnce !== undefined) config.requestsAtOnce = atOnce;
  const maxRetries = wholeNumber('retries', v.retries);
  const baseDelayMs = wholeNumber('retry-delay', v['retry-delay']);
  return { id, config, retry: { ...(maxRetries !== undefined && { maxRetries }), ...(baseDelayMs !== undefined && { baseDelayMs }) } };
}

/** --in-flight N, checked against the same limits as the app's setting. */
export function requestsAtOnceOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !isRequestsAtOnce(n)) {
    throw new UsageError(`--in-flight must be a whole number from ${REQUESTS_AT_ONCE.min} to ${REQUESTS_AT_ONCE.max}, got "${value}".`);
  }
  return n;
}

/**
 * The engine the flags name; for a server, connected and measured before
 * anything is read. The key comes from --api-key or the environment
 * (MEMAGENT_API_KEY, then OPENAI_API_KEY), which keeps it out of shell history.
 */
export async function openEngine(
  v: ServerFlags,
  onRetry: (n: RetryNotice) => void,
  say: (line: string) => void = () => undefined,
): Promise<{ engine: Engine; config: EngineConfig }> {
  const { id, config, retry } = engineConfigOf(v);
  // WebLLM's engine here is node's: Dawn for WebGPU, a folder for Cache Storage.
  if (id === 'webllm') return { engine: await openGpuEngine(v, say), config };
  try {
    const engine = await createEngine(id, config, {
      apiKey: v['api-key'] ?? process.env.MEMAGENT_API_KEY ?? process.env.OPENAI_API_KEY,
      retry,
      onRetry,
    });
    return { engine, config };
  } catch (e) {
    // An address or model the server cannot take is the command line's to fix.
    if (e instanceof EngineSettingsError) throw new UsageError(e.message);
    throw e;
  }
}

/** The prompt set the flags choose (see prompts.ts); a flag that cannot be used is a usage error. */
export async function choosePrompts(flags: PromptFlags, engineId: string, say: (line: string) => void): Promise<ResolvedPrompts> {
  try {
    return await resolveCliPrompts(flags, engineId, { say });
  } catch (e) {
    if (e instanceof PromptOptionError) throw new UsageError(e.message);
    throw e;
  }
}

export function describePrompts(record: PromptRecord): string {
  return `prompts: ${promptSetName(record)}${record.file ? ` (${record.file.path.split('/').pop()}, SHA-256 ${record.file.sha256.slice(0, 12)}…)` : ''}`;
}

export function describeEngine(engine: Engine): string {
  const gpu = describeGpuEngine(engine);
  if (gpu) return gpu;
  if (!(engine instanceof OpenAIEngine)) return `engine ${engine.id}`;
  const { server } = engine;
  return (
    `model ${server.model} at ${server.baseUrl} (context ${server.serverContextWindow.toLocaleString('en')} tokens, ` +
    `token counts ${server.counts.source === 'server' ? 'from the server' : 'estimated locally with a margin'})`
  );
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
