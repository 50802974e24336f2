import type { ChunkLists } from '../core/chunk-lists';
import { chunkCount } from '../core/estimate';
import { bookName } from '../core/book-set';
import { infmemProblem, planRead, questionPlan, type ReadSettings, readSettings, readSettingsProblem } from '../core/plan';
import { CHUNK_TOKENS } from '../core/infmem/retrieval';
import { REPLY_TOKENS } from '../core/infmem/thinking';
import { DEFAULT_TEMPLATES, templateProblem } from '../core/prompts';
import type { PlannedChunk } from '../core/read-reason';
import { DEFAULT_SKIM, SkimIndex, SkimPlanner } from '../core/skim';
import { type Engine, withoutSecrets } from '../engines/engine';
import { configModel, memagentProblem, WEBLLM_INFO } from '../engines/webllm/models/models';
import type { Library } from '../library/library';
import type { RunRecord, RunSettings, Store } from '../storage/db';
import type { EngineCache } from '../jobs/engines';
import { RequestError } from '../jobs/request-error';
import { loadSet, type PlannedSet, planSet, setChunks, setName } from './book-set';
import { choosePromptSet, type PromptLibrary } from './prompt-files';
import { infmemPromptsFor } from './infmem-model';
import type { InfmemFileLibrary } from './infmem-files';
import { infmemChat } from './infmem-chat';
import type { PromptChoice, RunRequest } from '../agent/protocol';

export interface PlanDeps {
  store: Store;
  library: Library;
  engines: EngineCache;
  lists: ChunkLists;
  prompts?: PromptLibrary;
  /** InfMem's pinned files; without it InfMem reads with the extractive engine only. */
  infmemFiles?: InfmemFileLibrary;
  newId?(): string;
}

/** A Qwen3 model reads with InfMem only (memagentProblem): a MemAgent read or evaluation is refused before its files are fetched. */
export function refuseInfmemOnly(request: Pick<RunRequest, 'engineId' | 'engineConfig'>): void {
  const problem = request.engineId === WEBLLM_INFO.id ? memagentProblem(configModel(request.engineConfig ?? {})) : null;
  if (problem) throw new RequestError(problem);
}

/**
 * Plans one run per question about one book, together, so that they share
 * one chunk size and so one chunk list, cut once: the budget from the
 * engine's window and the longest question, the prompt set, and for a skim
 * the chunks it reads. Nothing is stored; a request that cannot work is
 * refused in words.
 */
export async function planRuns(deps: PlanDeps, request: Omit<RunRequest, 'question'>, questionList: readonly string[]): Promise<RunRecord[]> {
  const questions = questionList.map((q) => q.trim());
  if (questions.length === 0 || !questions[0]) throw new RequestError('Enter a question before reading: the memory keeps what helps answer it.');
  const empty = questions.findIndex((q) => !q);
  if (empty >= 0) throw new RequestError(`Question ${empty + 1} is empty: type a question there or remove it.`);
  const asked = readSettings(request);
  const wrong = readSettingsProblem(asked);
  if (wrong) throw new RequestError(wrong.message);
  // A Qwen3 model reads the InfMem way: only a MemAgent read of it is refused.
  if (!request.method) refuseInfmemOnly(request);
  const { store, library, engines } = deps;
  infmemRefusal(request);
  const skim = request.skim ? { ...DEFAULT_SKIM, keep: request.skim.keep } : null;
  // A set is laid out from its books' records; only a skim, which ranks every chunk first, reads them all now.
  const ids = request.documentIds;
  const loaded = ids && ids.length > 1 && skim ? await loadSet(store, library, ids) : null;
  const set: PlannedSet | null = loaded ?? (ids && ids.length > 1 ? await planSet(store, library, ids) : null);
  const doc = await store.getDocument(set ? set.books[0]!.documentId : request.documentId);
  // A read that is not a skim needs no more than the book's beginning to start: a book still arriving is not waited for.
  const setText = loaded?.text ?? '';
  const text = set ? setText : doc && (skim || !library.arriving(doc.id) ? await library.bookText(doc) : '');
  if (!doc || text === undefined) throw new RequestError('That document is no longer stored. Add the file again.');
  const engine = await engines.open(request.engineId, request.engineConfig);
  const infmemModel = request.method && (await infmemModelOf(deps, engine, request));
  const prompts = await choosePromptSet(deps.prompts, promptChoice(request), request.engineId, request.templates);
  const templates = { ...prompts.set.templates };
  const problem = templateProblem(templates);
  if (problem) throw new RequestError(problem);
  const settings = request.method ? infmemSettings(asked, engine) : planSettings(asked, engine, templates.update, questions);
  // The book is cut while it is read: the first step starts as soon as the first chunk is cut.
  // A skim ranks every chunk first, so it cuts the whole book before it starts.
  const pipelined = !skim;
  const allChunks = pipelined
    ? []
    : set
      ? setChunks(text, set.books, engine.tokenizer, settings.chunkTokens)
      : deps.lists.whole({ documentId: doc.id, tokenizer: engine.tokenizer, chunkTokens: settings.chunkTokens }, text);
  const index = skim ? new SkimIndex(text, allChunks) : null;
  const runs: RunRecord[] = [];
  const now = Date.now();
  // The questions of one read are linked, so that the page and the Library show them as one read.
  const readId = questions.length > 1 ? (deps.newId?.() ?? crypto.randomUUID()) : undefined;
  for (const [place, question] of questions.entries()) {
    const chunks: PlannedChunk[] =
      skim && index ? new SkimPlanner(index, question, skim).plan().map(({ index: i, reason }) => ({ ...allChunks[i]!, reason })) : [...allChunks];
    runs.push({
      id: deps.newId?.() ?? crypto.randomUUID(),
      documentId: doc.id,
      documentName: set ? setName(set.books.map(bookName)) : bookName(doc),
      ...(set && { books: set.books }),
      question,
      ...(readId && { readId }),
      engineId: request.engineId,
      engineConfig: withoutSecrets(request.engineConfig),
      // Each question samples with its own seed, the first with the read's.
      settings: questionPlan(settings, place),
      templates,
      prompts: prompts.record,
      chunks,
      ...(pipelined ? { chunking: { estimate: set ? set.chunksAbout(settings.chunkTokens) : Math.max(1, chunkCount(doc.tokens, settings.chunkTokens)) } } : {}),
      ...skimOf(skim, request, allChunks.length),
      ...(request.method && { method: { ...request.method } }),
      ...(infmemModel && { infmemModel }),
      status: 'running',
      nextChunk: 0,
      memory: prompts.set.initialMemory,
      // Apart by a millisecond each, so that the list of runs (newest first) keeps the questions' order.
      createdAt: now + (questions.length - 1 - runs.length),
      updatedAt: now,
    });
  }
  return runs;
}

/**
 * The settings the runs of one read are planned with: the budget from the
 * engine's window, the update template and the longest question (which sets
 * the room left for chunks, so every run cuts the book the same way). A
 * budget with no room for a chunk is refused in words.
 */
export function planSettings(
  asked: ReadSettings,
  engine: Pick<Engine, 'contextWindow' | 'tokenizer'>,
  updateTemplate: string,
  questions: readonly string[],
): RunSettings {
  const count = (s: string) => engine.tokenizer.count(s);
  try {
    return planRead(asked, { contextWindow: engine.contextWindow, count, updateTemplate, questionTokens: Math.max(0, ...questions.map(count)) });
  } catch (e) {
    throw new RequestError((e as Error).message);
  }
}

/** Refuses, in words, an InfMem read the app cannot make. */
function infmemRefusal(request: Omit<RunRequest, 'question'>): void {
  const method = request.method;
  if (!method) return;
  const problem = infmemProblem(method);
  if (problem) throw new RequestError(problem);
  if (request.skim) throw new RequestError('InfMem chooses what to read itself, and may stop early: turn Skim off, or read with MemAgent.');
}

/**
 * What an InfMem read with a model records before anything is stored: its
 * chat text, and its two prompt files, which must be here or be fetched now.
 * The extractive engine needs neither; an engine that cannot continue a
 * rendered prompt is refused.
 */
async function infmemModelOf(deps: PlanDeps, engine: Engine, request: Omit<RunRequest, 'question'>): Promise<RunRecord['infmemModel']> {
  if (request.engineId === 'extractive') return undefined;
  const otherwise = 'choose another engine, or read with MemAgent';
  const { sources } = await infmemPromptsFor({ engine, engineId: request.engineId, files: deps.infmemFiles, otherwise });
  return { family: infmemChat(engine, request.engineConfig).family, files: sources };
}

/** An InfMem read's plan: its chunks and replies are the method's (5,000 and 1,024 tokens), whatever the form asks. */
function infmemSettings(asked: ReadSettings, engine: Pick<Engine, 'contextWindow'>): RunSettings {
  return { ...asked, requestedChunkTokens: CHUNK_TOKENS, chunkTokens: CHUNK_TOKENS, memoryTokens: REPLY_TOKENS, contextTokens: engine.contextWindow };
}

/** A skimming run's plan as stored on it: the skim's settings, what the request asked of it and the book's chunks. */
function skimOf(skim: typeof DEFAULT_SKIM | null, request: Omit<RunRequest, 'question'>, totalChunks: number): Pick<RunRecord, 'skim'> {
  if (!skim || !request.skim) return {};
  const { followMemory, lookBack } = request.skim;
  return { skim: { ...skim, followMemory, ...(followMemory && lookBack ? { lookBack: true } : {}), totalChunks } };
}

/** The set a request asks for: a set by name, else 'custom' for edited templates, else this app's wording. */
export function promptChoice(request: Pick<RunRequest, 'prompts' | 'templates'>): PromptChoice {
  if (request.prompts) return request.prompts;
  const edited = request.templates && (request.templates.update !== DEFAULT_TEMPLATES.update || request.templates.final !== DEFAULT_TEMPLATES.final);
  return edited ? 'custom' : 'app';
}
