/**
 * How an InfMem run reads (docs/infmem.md): the book cut as the method cuts
 * it (5,000-token chunks, 500-token passages), InfMem's loop over it with the
 * engine's steps, and each chunk's plan, passages and memory committed with
 * the planner's state before any tab hears of it, so that a resume goes on
 * with the same votes and searches. A read that stops early is done, its
 * unread chunks left as they are, with where it stopped.
 */
import { infmemLoop, type InfmemResume, type InfmemSteps, type PlanEvent, type WriteEvent } from '../core/infmem/loop';
import { type InfmemDocument, prepareDocument } from '../core/infmem/retrieval';
import { placeDocument } from '../core/infmem/places';
import { DEFAULT_EARLY_STOP } from '../core/infmem/planner-state';
import { diffMemory } from '../core/memory-diff';
import type { Tokenizer } from '../core/tokenizer';
import type { Engine } from '../engines/engine';
import { extractiveInfmemAnswer, extractiveInfmemSteps } from '../engines/extractive/infmem-steps';
import { INITIAL_MEMORY } from '../core/prompts';
import type { RunEvent } from '../agent/events';
import type { RetrievedPassage, RunProgress, RunRecord, StepPlan, Store } from '../storage/db';
import type { JobContext } from '../jobs/host';
import type { StepHold } from '../jobs/step-hold';
import type { InfmemFileLibrary } from './infmem-files';
import { infmemChat } from './infmem-chat';
import { infmemModelSteps, infmemPromptsFor } from './infmem-model';

/** Characters of a passage kept on its step, to show without reading the book. */
const EXCERPT_CHARS = 240;

export interface InfmemReadDeps {
  store: Store;
  publish(event: RunEvent): void;
  hold?: StepHold;
  /** InfMem's pinned files, for a model's read (the extractive engine needs none). */
  infmemFiles?: Pick<InfmemFileLibrary, 'prompts'>;
}

interface StepsInput {
  engine: Engine;
  run: RunRecord;
  document: InfmemDocument;
  signal: AbortSignal;
}

/**
 * The steps of the run's engine: the extractive engine's stand-ins, or a
 * model's raw completions through the official prompts, rendered in the chat
 * text the run recorded. The first request a server answers at its chat
 * endpoint (it has no raw completions) is noted on the run; the page reads it
 * with the step that follows.
 */
async function stepsFor(deps: InfmemReadDeps, { engine, run, document, signal }: StepsInput): Promise<InfmemSteps> {
  if (run.engineId === 'extractive') return extractiveInfmemSteps(document, engine.tokenizer);
  return modelStepsFor(deps, { engine, run, signal });
}

/**
 * The final step of the run's engine, with the memory a read starts from: what
 * a follow-up question to a finished InfMem read is answered with, as the read
 * answered its own (the extractive engine's stand-in, or the official final
 * prompt continued by the model).
 */
export async function finalStepFor(
  deps: Pick<InfmemReadDeps, 'store' | 'infmemFiles'>,
  input: Omit<StepsInput, 'document'>,
): Promise<Pick<InfmemSteps, 'initialMemory' | 'answer'>> {
  if (input.run.engineId === 'extractive') return { initialMemory: INITIAL_MEMORY, answer: extractiveInfmemAnswer };
  return modelStepsFor(deps, input);
}

/** A model's steps (see stepsFor): the kept files' prompts continued on the engine's raw completer. */
async function modelStepsFor(deps: Pick<InfmemReadDeps, 'store' | 'infmemFiles'>, { engine, run, signal }: Omit<StepsInput, 'document'>): Promise<InfmemSteps> {
  const prompts = await infmemPromptsFor({ engine, engineId: run.engineId, files: deps.infmemFiles, otherwise: 'read with MemAgent' });
  const { temperature, topP } = run.settings;
  return infmemModelSteps({
    engine,
    prompts,
    chat: infmemChat(engine, run.engineConfig, run.infmemModel?.family),
    thinking: run.method?.thinking ?? true,
    temperature,
    topP,
    questionTokens: engine.tokenizer.count(run.question),
    signal,
    // A book is untrusted: its control strings, and the question's and memory's, go inert, and the run says so.
    verbatim: false,
    ...(!run.infmemModel?.inert && {
      onInert: async () => {
        await deps.store.updateRun(run.id, (now) => ({ infmemModel: { ...(now.infmemModel ?? { family: 'qwen3', files: prompts.sources }), inert: true } }));
      },
    }),
    ...(run.infmemModel?.endpoint !== 'chat' && {
      onChatEndpoint: async () => {
        await deps.store.updateRun(run.id, (now) => ({
          infmemModel: { ...(now.infmemModel ?? { family: 'qwen3', files: prompts.sources }), endpoint: 'chat' },
        }));
      },
    }),
  });
}

export interface InfmemRead {
  run: RunRecord;
  /** The run's whole text (a set's books joined). */
  text: string;
  engine: Engine;
  job: JobContext;
}

/** Reads an InfMem run from where it stands; true once its answer is stored. */
export async function readInfmem(deps: InfmemReadDeps, { run: loaded, text, engine, job }: InfmemRead): Promise<boolean> {
  const { store, publish } = deps;
  const { signal } = job;
  const runId = loaded.id;
  const tokenizer = engine.tokenizer;
  const document = prepareDocument(text, tokenizer);
  const places = placeDocument(text, document);
  if (loaded.chunking || loaded.chunks.length !== document.chunks.length) {
    const chunks = places.chunks.map((p, i) => ({ ...p, tokens: document.chunks[i]!.end - document.chunks[i]!.start }));
    await store.updateRun(runId, () => ({ chunks, chunking: undefined }));
    publish({ type: 'chunks', runId, known: chunks.length, done: true });
  }
  const steps = await stepsFor(deps, { engine, run: loaded, document, signal });
  let run: RunProgress = loaded;
  const held: InfmemSteps = {
    ...steps,
    plan: async (view) => {
      await deps.hold?.before(runId, run.nextChunk, signal);
      return steps.plan(view);
    },
  };
  const resume: InfmemResume | undefined =
    run.nextChunk > 0 ? { nextChunk: run.nextChunk, memory: run.memory, votes: run.infmem?.votes ?? 0, history: run.infmem?.history ?? [] } : undefined;
  const loop = infmemLoop({
    document,
    question: run.question,
    steps: held,
    earlyStop: run.method?.earlyStop ?? DEFAULT_EARLY_STOP,
    signal,
    ...(resume && { resume }),
  });
  const step = { plan: null as PlanEvent | null, startedAt: performance.now() };
  let stopped: { index: number; votes: number } | undefined;
  for await (const event of loop) {
    if (event.kind === 'plan') {
      step.plan = event;
      if (event.ends) stopped = { index: event.index, votes: event.votes };
    } else if (event.kind === 'write') {
      run = await commitStep(deps, { run, event, plan: step.plan, ms: performance.now() - step.startedAt, document, places, tokenizer, text });
      job.stored();
      step.startedAt = performance.now();
    } else {
      await store.updateRun(runId, (now) => ({
        status: 'done',
        answer: event.answer || event.final,
        reply: event.final,
        error: undefined,
        finishedAt: Date.now(),
        infmem: { ...now.infmem, votes: stopped?.votes ?? now.infmem?.votes ?? 0, history: now.infmem?.history ?? [], ...(stopped && { stopped }) },
      }));
      publish({ type: 'status', runId, status: 'done' });
      return true;
    }
  }
  return false;
}

interface CommitInput {
  run: RunProgress;
  event: WriteEvent;
  plan: PlanEvent | null;
  ms: number;
  document: InfmemDocument;
  places: ReturnType<typeof placeDocument>;
  tokenizer: Tokenizer;
  text: string;
}

/** One chunk's revision with its plan and passages, and the planner's state, in one transaction; then every tab hears of it. */
async function commitStep(deps: InfmemReadDeps, input: CommitInput): Promise<RunProgress> {
  const { run, event, plan, document, places, tokenizer, text } = input;
  const chunk = places.chunks[event.index]!;
  const tokens = document.chunks[event.index]!;
  const retrieved: RetrievedPassage[] = event.units.map((u) => {
    const place = places.units[u]!;
    return { chunk: document.units[u]!.chunk, ...place, excerpt: text.slice(place.start, Math.min(place.end, place.start + EXCERPT_CHARS)) };
  });
  const stepPlan: StepPlan = {
    stop: plan?.stop ?? false,
    queries: plan?.retrievals.map((r) => r.query) ?? [],
    votes: event.votes,
    retrieved,
  };
  const ties = [...(run.infmem?.ties ?? []), ...(event.tied ? [event.index] : [])];
  const change = diffMemory(run.memory, event.memory);
  const passageTokens = event.units.reduce((n, u) => n + document.units[u]!.end - document.units[u]!.start, 0);
  const stored = await deps.store.commitRevision(
    {
      runId: run.id,
      index: event.index,
      memoryTokens: tokenizer.count(event.memory),
      wordsAdded: change.wordsAdded,
      wordsRemoved: change.wordsRemoved,
      start: chunk.start,
      end: chunk.end,
      chunkTokens: tokens.end - tokens.start,
      promptTokens: tokens.end - tokens.start + passageTokens,
      completionTokens: tokenizer.count(event.memory),
      ms: input.ms,
      finishReason: 'stop',
      retries: 0,
      committedAt: Date.now(),
      plan: stepPlan,
    },
    event.memory,
    undefined,
    { votes: event.votes, history: event.history, ...(ties.length > 0 && { ties }) },
  );
  deps.publish({ type: 'revision', runId: run.id, index: event.index });
  return stored;
}

/** What the run reader lends an InfMem read: its book's text, and the imports it holds back until the read begins. */
export interface InfmemJob {
  run: RunRecord;
  job: JobContext;
  /** The run's whole text; undefined where the book went with the run. */
  bookText(run: RunRecord): Promise<string | undefined>;
  /** Lets held-back imports go on. */
  release(): void;
  /** Traces the answer's sources once it is stored. */
  trace?(): Promise<unknown>;
}

/** An InfMem run's job: its book, its engine, the read; imports held back until it has begun, sources traced after. */
export async function infmemJob(deps: InfmemReadDeps, { run, job, bookText, release, trace }: InfmemJob): Promise<void> {
  let answered: boolean;
  try {
    const text = await bookText(run);
    if (text === undefined) return;
    const engine = await job.engine(run.engineId, run.engineConfig);
    release();
    answered = await readInfmem(deps, { run, text, engine, job });
  } finally {
    release();
  }
  // The answer is stored and told: its sources follow. A failure here leaves them to be traced when the run is shown.
  if (answered) await trace?.().catch(() => undefined);
}
