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
import { formatDatasetTable, type PromptsUsed, promptsUsed } from '../eval/dataset-report';
import { datasetComparison, datasetExport, filesByMethod } from '../eval/dataset-methods';
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
import { runReaders, type SampleSteps, sampleSteps } from './eval-groups';
import { paperF1 } from '../eval/paper-score';
import { formatComparison } from '../eval/compare';
import { EVAL_METHOD_NAMES, type EvalMethod } from '../eval/infmem-read';
import { readInfmemItem } from '../eval/infmem-item';
import type { InfmemReader } from './eval-infmem';
import { promptSetName, type ResolvedPrompts } from './prompts';
import { whole } from './numbers';
import { abortOnCtrlC } from './ctrl-c';

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

/** InfMem's part of a dataset evaluation: its reader and settings. */
export interface DatasetInfmem {
  reader: Pick<InfmemReader, 'about' | 'codec' | 'stepsFor'>;
  earlyStop: number;
  thinking: boolean;
}

/** The methods a dataset evaluation reads by, in order: MemAgent's by default. */
export type DatasetMethods = readonly EvalMethod[];

/** The lines that say what reads the items, by which method and settings, checked to fit the engine. */
function describeMethods(plan: DatasetPlan, describe: string, by: { methods: DatasetMethods; infmem?: DatasetInfmem; memagentReaders: number }): string {
  const { settings } = plan;
  const lines: string[] = [];
  if (by.methods.includes('memagent')) {
    lines.push(
      `${describe}; method ${settings.method}, chunks of ${settings.chunkTokens.toLocaleString('en')} tokens (${CUTTER_LABELS[METHOD_CUTTER]}), ` +
        `max ${settings.memoryTokens.toLocaleString('en')} tokens per reply, temperature ${settings.temperature}, top p ${settings.topP}; ` +
        `prompts: ${plan.promptsLabel}${plan.prompts.sha256 ? ` (SHA-256 ${plan.prompts.sha256.slice(0, 12)}…)` : ''}; ${whole(by.memagentReaders)} at a time.`,
    );
  }
  if (by.infmem) {
    lines.push(`${lines.length ? '' : `${describe}; `}${by.infmem.reader.about}; chunks of 5,000 tokens, units of 500; ${whole(plan.concurrency)} at a time.`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Reads every item with `concurrency` in flight (a batching server serves
 * them together), by each method in turn on the same items, prints the
 * tables (and with both methods their comparison) and writes the JSON.
 * Returns the exit code.
 */
export async function runDatasetEval(
  plan: DatasetPlan,
  engine: Engine,
  io: DatasetEvalIO,
  by: { methods?: DatasetMethods; infmem?: DatasetInfmem } = {},
): Promise<number> {
  const { settings } = plan;
  const methods = by.methods ?? ['memagent'];
  // On an engine that batches, MemAgent reads as many items together as one batch of the method's step holds.
  const steps = methods.includes('memagent') ? await sampleSteps(engine, stepTokens(settings, engine), io.say) : undefined;
  io.out(describeMethods(plan, io.describeEngine, { ...by, methods, memagentReaders: steps?.size ?? plan.concurrency }));

  const stop = abortOnCtrlC();
  const total = plan.files.reduce((n, f) => n + (f.items ?? 0), 0) * methods.length;
  const results: { method: EvalMethod; result: ItemResult }[] = [];
  const counter = { done: 0, total };
  let failure: unknown;
  io.begin?.();
  for (const method of methods) {
    if (stop.signal.aborted) break;
    const infmem = by.infmem;
    const read: ReadOne =
      method === 'infmem'
        ? (item, file) => {
            if (!infmem) throw new Error('InfMem was asked for without its reader.');
            return readInfmemItem(item, file, {
              codec: infmem.reader.codec,
              stepsFor: infmem.reader.stepsFor,
              earlyStop: infmem.earlyStop,
              signal: stop.signal,
            });
          }
        : (item, file, generator) => readItem(item, file, settings, { generator, tokenizer: engine.tokenizer, signal: stop.signal, fatal: stopsEverySample });
    const label = methods.length > 1 ? `${EVAL_METHOD_NAMES[method]} ` : '';
    const pass: ItemResult[] = [];
    const readers = { engine, steps: method === 'memagent' ? steps : undefined };
    failure ??= await readPass(plan, read, { ...readers, io, stop, results: pass, counter, label });
    results.push(...pass.map((result) => ({ method, result })));
  }
  stop.release();
  io.end?.();

  const scored = reportDataset(plan, io, { methods, results, infmem: by.infmem });
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

/** The tables, the comparison with both methods, and the JSON; returns how many items were scored. */
function reportDataset(
  plan: DatasetPlan,
  io: DatasetEvalIO,
  run: { methods: DatasetMethods; results: readonly { method: EvalMethod; result: ItemResult }[]; infmem?: DatasetInfmem },
): number {
  const { methods, results } = run;
  const items = results.map((r) => ({ ...r.result, method: r.method }));
  // The files as listed, with their item counts: each file's number of documents comes from its items.
  const files = plan.files.map((f) => ({ name: f.name, numDocs: null, ...(f.items !== undefined && { items: f.items }) }));
  const byMethod = filesByMethod(methods, files, items);
  for (const { method, files: methodFiles } of byMethod) {
    if (methods.length > 1 || method === 'infmem')
      io.out(`${EVAL_METHOD_NAMES[method]}${method === 'infmem' ? ` (early stop ${run.infmem?.earlyStop})` : ''}:\n`);
    io.out(formatDatasetTable(methodFiles));
    if (methods.length > 1) io.out('\n');
  }
  const comparison = datasetComparison(files, items);
  if (methods.length > 1) io.out(`Both methods on the same items, the same engine (accuracy: sub_em):\n${formatComparison(comparison, 'file')}`);
  const scored = results.filter((r) => r.result.scores).length;
  io.out(`\n${whole(results.length)} item${results.length === 1 ? '' : 's'} read, ${whole(scored)} scored; paper: RL-MemoryAgent-7B and -14B, sub_em %.\n`);
  if (plan.json) {
    const infmem = run.infmem && { earlyStop: run.infmem.earlyStop, thinking: run.infmem.thinking };
    const exported = datasetExport({ byMethod, memagentMethod: plan.settings.method, prompts: plan.prompts, comparison, ...(infmem && { infmem }) });
    io.write(plan.json, `${JSON.stringify(exported, null, 2)}\n`);
  }
  return scored;
}

/** One item read by one method through `generator` (the engine, or the reader's member of a batch). */
type ReadOne = (item: DatasetItem, file: string, generator: TextGenerator) => Promise<ItemResult>;

/** One method's pass over every item, `concurrency` in flight or one batch's worth; returns the error that stopped it. */
async function readPass(
  plan: DatasetPlan,
  read: ReadOne,
  run: {
    engine: Engine;
    steps: SampleSteps | undefined;
    io: DatasetEvalIO;
    stop: AbortController;
    results: ItemResult[];
    counter: { done: number; total: number };
    label: string;
  },
): Promise<unknown> {
  const { io, stop, results, counter } = run;
  const source = allItems(plan);
  let failure: unknown;
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
        const r = await read(item, file, generator);
        results.push(r);
        const secs = `${(r.ms / 1000).toFixed(1)} s`;
        const at = `[${whole(++counter.done)}/${counter.total ? whole(counter.total) : '?'}] [${run.label}${file} #${whole(r.index + 1)}]`;
        const chunks =
          r.chunksRead !== undefined && r.chunksRead < r.chunks
            ? `${whole(r.chunksRead)} of ${whole(r.chunks)} chunks read`
            : `${whole(r.chunks)} chunk${r.chunks === 1 ? '' : 's'}`;
        const line = r.scores
          ? `${at} sub_em ${r.scores.sub_em}, em ${r.scores.em}, f1 ${paperF1(r.scores).toFixed(2)} · ${chunks} · ${secs}`
          : `${at} failed, left out of the averages: ${r.failed}`;
        if (io.sample) io.sample(line, { done: counter.done, total: counter.total, label: `${run.label}${file} #${whole(r.index + 1)}` });
        else io.say(line);
      } catch (e) {
        if (!isAbortError(e)) failure ??= e;
        stop.abort();
      }
    }
  };
  await runReaders(run.engine, run.steps, run.steps?.size ?? plan.concurrency, reader);
  return failure;
}
