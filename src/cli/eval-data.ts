/**
 * `memagent eval --data FILE…`: RULER-HotpotQA files read by the paper's
 * method (`recurrent` or `recurrent-boxed`), scored by the paper's rules and
 * printed beside the paper's figures; `--json OUT` writes every sample.
 */
import { createReadStream, existsSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { isAbortError, type TextGenerator } from '../core/generation';
import type { ReadSettings } from '../core/plan';
import { APP_PROMPT_SET, promptRecord } from '../core/prompt-sets';
import { CUTTER_LABELS } from '../core/token-slices';
import type { Engine } from '../engines/engine';
import { type DatasetItem, DatasetError, readDataset } from '../eval/dataset';
import { datasetReport, datasetReportJson, formatDatasetTable, type PromptsUsed, promptsUsed, summarizeFiles } from '../eval/dataset-report';
import {
  defaultMethod,
  type ItemResult,
  isMethodId,
  METHOD_CUTTER,
  METHOD_IDS,
  type MethodSettings,
  methodSettings,
  methodStepTokens,
  readItem,
} from '../eval/method';
import { stopsEverySample } from '../engines/sample-groups';
import { runReaders, sampleSteps } from './eval-groups';
import { paperF1 } from '../eval/paper-score';
import { promptSetName, type ResolvedPrompts } from './prompts';
import { whole } from './numbers';

/** A flag that cannot work, said so that the person can fix it. */
export class DatasetArgsError extends Error {
  override name = 'DatasetArgsError';
}

export interface DatasetEvalArgs {
  data: string[];
  method?: string;
  /** The prompt set chosen by --prompts, --prompts-file and --prompts-base (prompts.ts). */
  prompts?: ResolvedPrompts;
  /** The read settings the flags give (chunk, memory, temperature, top p); the paper's where absent. */
  settings?: Partial<ReadSettings>;
  /** Items read from each file, from its first (default all). */
  samples?: number;
  concurrency: number;
  json?: string;
}

export interface DatasetPlan {
  /** `items`: how many will be read from the file, once checkDatasetFiles has read it through. */
  files: { path: string; name: string; items?: number }[];
  settings: MethodSettings;
  /** What the report records: the set and, for MemAgent's, the file's SHA-256. */
  prompts: PromptsUsed;
  /** The set's name inside the line printed before reading. */
  promptsLabel: string;
  samples?: number;
  concurrency: number;
  json?: string;
}

/** Checks the flags and files before any engine is opened; `prompts` is the set --prompts chose (this app's wording when absent). */
export function planDatasetEval(args: DatasetEvalArgs): DatasetPlan {
  const files = args.data.map((path) => {
    if (!existsSync(path) || !statSync(path).isFile()) throw new DatasetArgsError(`There is no dataset file ${path}.`);
    return { path, name: basename(path) };
  });
  const names = files.map((f) => f.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice) throw new DatasetArgsError(`Two dataset files are named ${twice}: results are reported by file name, so give each length once.`);
  const prompts = args.prompts ?? { set: { ...APP_PROMPT_SET }, record: promptRecord(APP_PROMPT_SET) };
  if (args.method !== undefined && !isMethodId(args.method)) throw new DatasetArgsError(`--method is ${METHOD_IDS.join(' or ')}, got "${args.method}".`);
  // The method that reads what the set's final template asks for: recurrent for MemAgent (paper), recurrent-boxed for the boxed set.
  const method = args.method ?? defaultMethod(prompts.set.templates, prompts.set.answerStyle);
  return {
    files,
    settings: methodSettings({
      method,
      templates: { ...prompts.set.templates },
      initialMemory: prompts.set.initialMemory,
      ...args.settings,
    }),
    prompts: promptsUsed(prompts.record),
    promptsLabel: promptSetName(prompts.record),
    ...(args.samples !== undefined && { samples: args.samples }),
    concurrency: args.concurrency,
    ...(args.json !== undefined && { json: args.json }),
  };
}

/** One file's items, up to `samples` of them. */
async function* fileItems(plan: DatasetPlan, f: DatasetPlan['files'][number]): AsyncGenerator<DatasetItem> {
  let n = 0;
  for await (const item of readDataset(createReadStream(f.path, { encoding: 'utf8', highWaterMark: 1 << 20 }) as AsyncIterable<string>, f.name)) {
    if (plan.samples !== undefined && n >= plan.samples) break;
    n++;
    yield item;
  }
}

/**
 * Reads every file through once before any model time is spent, so that a
 * broken file is found at the start, not hours in; counts the items to read.
 */
export async function checkDatasetFiles(plan: DatasetPlan): Promise<void> {
  for (const f of plan.files) {
    let n = 0;
    try {
      for await (const _ of fileItems(plan, f)) n++;
    } catch (e) {
      if (e instanceof DatasetError) throw new DatasetArgsError(e.message);
      throw e;
    }
    f.items = n;
  }
}

/** Each file's items in turn. */
async function* allItems(plan: DatasetPlan): AsyncGenerator<{ file: string; item: DatasetItem }> {
  for (const f of plan.files) for await (const item of fileItems(plan, f)) yield { file: f.name, item };
}

export interface DatasetEvalIO {
  /** A progress line (stderr). */
  say(line: string): void;
  /** The table (stdout). */
  out(text: string): void;
  /** Writes a file whole. */
  write(path: string, text: string): void;
  describeEngine: string;
  /** A line that shows whatever the progress asked for (an error); `say` by default. */
  error?(line: string): void;
  /** The first item is about to be read. */
  begin?(): void;
  /** A finished item, for the progress to show; `say` of its line by default. */
  sample?(line: string, step: { done: number; total: number; label: string }): void;
  /** Every item read: the progress ends before the table. */
  end?(): void;
}

/** One step of the method's tokens, refused where the engine's window cannot hold it. */
function stepTokens(settings: MethodSettings, engine: Engine): number {
  const step = methodStepTokens(settings, (s) => engine.tokenizer.count(s));
  if (step > engine.contextWindow) {
    throw new DatasetArgsError(
      `One step of the method needs up to ${step.toLocaleString('en')} tokens (a ${settings.chunkTokens.toLocaleString('en')}-token chunk, ` +
        `a ${settings.memoryTokens.toLocaleString('en')}-token memory and as long a reply, the template and the question); ` +
        `the engine holds ${engine.contextWindow.toLocaleString('en')}. Serve the model with a longer context, or give a smaller --chunk.`,
    );
  }
  return step;
}

/**
 * Reads every item with `concurrency` in flight (a batching server serves them
 * together), or, on an engine that batches itself, as many as one batch of
 * the method's step holds; prints the table and writes the JSON. Returns the
 * exit code.
 */
export async function runDatasetEval(plan: DatasetPlan, engine: Engine, io: DatasetEvalIO): Promise<number> {
  const { settings } = plan;
  const steps = await sampleSteps(engine, stepTokens(settings, engine), io.say);
  const readers = steps?.size ?? plan.concurrency;
  io.out(
    `${io.describeEngine}; method ${settings.method}, chunks of ${settings.chunkTokens.toLocaleString('en')} tokens (${CUTTER_LABELS[METHOD_CUTTER]}), ` +
      `max ${settings.memoryTokens.toLocaleString('en')} tokens per reply, temperature ${settings.temperature}, top p ${settings.topP}; ` +
      `prompts: ${plan.promptsLabel}${plan.prompts.sha256 ? ` (SHA-256 ${plan.prompts.sha256.slice(0, 12)}…)` : ''}; ${whole(readers)} at a time.\n\n`,
  );

  const stop = new AbortController();
  const onSigint = () => stop.abort();
  process.once('SIGINT', onSigint);
  const results: ItemResult[] = [];
  const source = allItems(plan);
  const total = plan.files.reduce((n, f) => n + (f.items ?? 0), 0);
  let done = 0;
  let failure: unknown;
  io.begin?.();
  const reader = async (generator: TextGenerator) => {
    while (!stop.signal.aborted) {
      let next: IteratorResult<{ file: string; item: DatasetItem }>;
      try {
        next = await source.next();
      } catch (e) {
        failure ??= e; // a broken file stops the evaluation: its remaining items cannot be read
        stop.abort();
        return;
      }
      if (next.done) return;
      const { file, item } = next.value;
      try {
        const r = await readItem(item, file, settings, { generator, tokenizer: engine.tokenizer, signal: stop.signal, fatal: stopsEverySample });
        results.push(r);
        const secs = `${(r.ms / 1000).toFixed(1)} s`;
        const at = `[${whole(++done)}/${total ? whole(total) : '?'}] [${file} #${whole(r.index + 1)}]`;
        const line = r.scores
          ? `${at} sub_em ${r.scores.sub_em}, em ${r.scores.em}, f1 ${paperF1(r.scores).toFixed(2)} · ${whole(r.chunks)} chunk${r.chunks === 1 ? '' : 's'} · ${secs}`
          : `${at} failed, left out of the averages: ${r.failed}`;
        if (io.sample) io.sample(line, { done, total, label: `${file} #${whole(r.index + 1)}` });
        else io.say(line);
      } catch (e) {
        if (!isAbortError(e)) failure ??= e;
        stop.abort();
      }
    }
  };
  await runReaders(engine, steps, readers, reader);
  process.off('SIGINT', onSigint);
  io.end?.();

  const files = summarizeFiles(
    plan.files.map((f) => ({
      name: f.name,
      numDocs: results.find((r) => r.file === f.name)?.numDocs ?? null,
      ...(f.items !== undefined && { items: f.items }),
    })),
    results,
  );
  io.out(formatDatasetTable(files));
  const scored = results.filter((r) => r.scores).length;
  io.out(`\n${whole(results.length)} item${results.length === 1 ? '' : 's'} read, ${whole(scored)} scored; paper: RL-MemoryAgent-7B and -14B, sub_em %.\n`);
  if (plan.json) io.write(plan.json, datasetReportJson(datasetReport(settings.method, plan.prompts, files)));
  if (failure !== undefined) {
    (io.error ?? io.say)(`Stopped by an error: ${failure instanceof Error ? failure.message : String(failure)}`);
    return 1;
  }
  if (stop.signal.aborted) {
    (io.error ?? io.say)('Stopped; the table shows the items finished so far.');
    return 130;
  }
  return results.length > 0 && scored === 0 ? 1 : 0;
}
