/**
 * What a `memagent read` starts from: a journal to resume, checked against
 * the command line, or a new plan and the header each journal begins with.
 */
import type { ChunkSpan } from '../core/chunker';
import { planRead, questionPlan, type ReadSettings } from '../core/plan';
import type { Engine } from '../engines/engine';
import { OpenAIEngine } from '../engines/openai/engine';
import { WebLLMEngine } from '../engines/webllm/engine';
import { choosePrompts } from './engine';
import { UsageError } from './flags';
import { type Journal, JOURNAL_FORMAT, JOURNAL_VERSION, type JournalHeader } from './journal';
import type { PromptFlags } from './prompts';
import { promptSetName } from './prompts';
import { chunkRead, type ReadText } from './read-set';

/** The flags a resume checks against its journal. */
export interface ResumeFlags {
  chunk?: string;
  memory?: string;
  prompts?: string;
  'prompts-file'?: string;
}

/**
 * Refuses a journal that the command line would continue wrongly: another
 * book, another question (when one is given), chunks cut for another text,
 * or another chunk size, memory size or prompt set than it was read with.
 */
export function checkResume(
  journal: Journal,
  { out, doc, file, question, v }: { out: string; doc: ReadText; file: string; question: string | undefined; v: ResumeFlags },
): void {
  const h = journal.header;
  if (h.document.hash !== doc.hash) throw new UsageError(`${out} was written for another file ("${h.document.name}"), not ${file}.`);
  if (question !== undefined && question !== h.question) {
    throw new UsageError(`${out} reads for another question ("${h.question}"). Drop --question to continue it, or choose another --out.`);
  }
  if (h.chunks.at(-1)?.[1] !== doc.text.length)
    throw new UsageError(`${out} does not cover this text: its chunks were cut for another version. Start over with --force.`);
  const clash = (flag: string, given: string | undefined, kept: number | undefined) => {
    if (given !== undefined && Number(given) !== kept)
      throw new UsageError(`${out} was read with --${flag} ${kept}; a resume keeps it. Drop --${flag}, or start over with --force.`);
  };
  clash('chunk', v.chunk, h.settings.requestedChunkTokens);
  clash('memory', v.memory, h.settings.memoryTokens);
  const asked = v['prompts-file'] !== undefined ? 'file' : v.prompts === undefined ? undefined : /\.json$/i.test(v.prompts) ? 'custom' : v.prompts;
  if (asked !== undefined && h.prompts && asked !== h.prompts.set) {
    throw new UsageError(
      `${out} was read with the prompts: ${promptSetName(h.prompts)}; a resume keeps them. Drop --prompts and --prompts-file, or start over with --force.`,
    );
  }
}

/** The engine and model a journal records, to tell a resume with another one. */
export function engineIdentity(engine: Engine): JournalHeader['engine'] {
  return {
    id: engine.id,
    ...(engine instanceof OpenAIEngine && { model: engine.model, baseUrl: engine.server.baseUrl }),
    ...(engine instanceof WebLLMEngine && { model: engine.model.id }),
  };
}

/** A resume with another engine or model would mix two models' writing in one memory: refused unless --force says it is meant. */
export function refuseOtherModel(kept: JournalHeader['engine'], now: JournalHeader['engine'], { out, force }: { out: string; force: boolean }): void {
  if (force || (kept.id === now.id && (kept.model ?? '') === (now.model ?? ''))) return;
  const name = (e: JournalHeader['engine']) => `--engine ${e.id}${e.model ? ` (model ${e.model})` : ''}`;
  throw new UsageError(
    `${out} was read with ${name(kept)}, not ${name(now)}: resuming would mix two models in one memory. Resume with the same engine and model, or add --force to continue with this one.`,
  );
}

/** The chunks a journal's header lists. */
export function chunksOf(header: JournalHeader): ChunkSpan[] {
  return header.chunks.map(([start, end, tokens]) => ({ start, end, tokens }));
}

/**
 * A new read of `questions`: the prompts, one plan and one cut of the book
 * for them all (room for the longest question, so every question reads the
 * same chunks), and each question's journal header, with its own seed.
 */
export async function newHeaders(
  questions: readonly string[],
  context: { v: PromptFlags; engine: Engine; doc: ReadText; settings: ReadSettings; say: (line: string) => void },
): Promise<{ headers: JournalHeader[]; chunks: ChunkSpan[] }> {
  const { engine, doc, settings } = context;
  const prompts = await choosePrompts(context.v, engine.id, context.say);
  const templates = { ...prompts.set.templates };
  const count = (s: string) => engine.tokenizer.count(s);
  const questionTokens = Math.max(...questions.map(count));
  const plan = planRead(settings, { contextWindow: engine.contextWindow, count, updateTemplate: templates.update, questionTokens });
  const chunks = chunkRead(doc, engine.tokenizer, plan.chunkTokens);
  const createdAt = new Date().toISOString();
  const headers = questions.map((question, index): JournalHeader => ({
    type: JOURNAL_FORMAT,
    version: JOURNAL_VERSION,
    document: { name: doc.name, hash: doc.hash, chars: doc.text.length, ...(doc.books && { books: doc.books }) },
    question,
    engine: engineIdentity(engine),
    // Each question samples with its own seed, the first with the read's.
    settings: questionPlan(plan, index),
    templates,
    prompts: prompts.record,
    initialMemory: prompts.set.initialMemory,
    chunks: chunks.map((c) => [c.start, c.end, c.tokens]),
    createdAt,
  }));
  return { headers, chunks };
}
