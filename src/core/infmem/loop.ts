/**
 * The InfMem loop, as its official evaluation runs it. Before each chunk a
 * planner either asks for BM25 retrieval over the whole document or votes
 * to stop; enough votes in a row end the read before that chunk is written.
 * Otherwise a writer rewrites the memory from the chunk, the retrieved units
 * and the memory so far. A final request answers from the memory.
 */
import { extractAnswer, memoryFromReply } from '../answer';
import { abortError } from '../generation';
import { neutralizeControlText } from '../prompts';
import { pyStrip } from '../pytext';
import { chatText, type ChatTextOptions } from './chat-text';
import type { InfmemTemplates } from './official-files';
import { pyFormat } from './py-format';
import { parsePlannerReply, type Retrieval, retrievalsOf } from './planner-reply';
import { historyText, StopCounter } from './planner-state';
import { type InfmemDocument, retrievedBlock, UnitIndex } from './retrieval';
import { type RawCompleter, type Reply, replyTo } from './thinking';

/** What the planner is shown before chunk `index`. */
export interface PlanView {
  question: string;
  memory: string;
  /** Every search asked so far, oldest first. */
  history: readonly Retrieval[];
  /** The history as the official prompt writes it. */
  hist: string;
}

/** What the writer is given for a chunk. */
export interface WriteView {
  question: string;
  memory: string;
  hist: string;
  /** The units retrieved for this chunk, in rank order, and the block the official prompt writes of them. */
  units: readonly number[];
  retrieved: string;
  /** The retrieved units' texts, in rank order: what `retrieved` frames. */
  passages: readonly string[];
  /** The four were cut inside a tie of equal scores (see WriteEvent.tied). */
  tied: boolean;
  chunk: string;
}

/**
 * How each of InfMem's three calls gets its reply: a model through the
 * official prompts (`modelSteps`), or the extractive engine's fixed rules.
 */
export interface InfmemSteps {
  /** The memory a read starts from. */
  initialMemory: string;
  plan(view: PlanView): Promise<Reply>;
  write(view: WriteView): Promise<Reply>;
  answer(view: { question: string; memory: string }): Promise<Reply>;
}

export interface InfmemLoopInput {
  document: InfmemDocument;
  question: string;
  steps: InfmemSteps;
  /** Votes in a row that end the read (the official evaluation's EARLY_STOP). */
  earlyStop: number;
  signal?: AbortSignal;
  /** Where a read stopped part way goes on from: the next chunk, the memory, the stop votes and the searches so far. */
  resume?: InfmemResume;
}

/** What a read carries from one chunk to the next: all a resume needs. */
export interface InfmemResume {
  nextChunk: number;
  memory: string;
  /** Votes to stop in a row after the last plan (see StopCounter). */
  votes: number;
  history: readonly Retrieval[];
}

/** A model's steps: each call's official prompt rendered as its chat text and continued by a raw completer. */
export interface ModelStepsInput {
  templates: InfmemTemplates;
  /** The planner's system message (fncall-system.ts). */
  toolSystem: string;
  completer: RawCompleter;
  chat: Pick<ChatTextOptions, 'family' | 'defaultSystem'>;
  thinking: boolean;
  temperature: number;
  topP: number;
  signal?: AbortSignal;
  /**
   * true: the question, memory, search history, retrieved texts and chunk go
   * into the prompts as they are, so that each request is the official
   * code's byte for byte (a dataset evaluation by InfMem's method). false:
   * their chat-template control strings are made inert first, as every
   * prompt of the app's reads has them (books are untrusted).
   */
  verbatim: boolean;
  /** Told before each request in which a control string was made inert (never when verbatim). */
  onInert?(): void | Promise<void>;
}

/** One prompt's slot values: as they are, or with their control strings made inert, noting whether any was. */
class SlotValues {
  inert = false;

  constructor(private readonly verbatim: boolean) {}

  text = (value: string): string => {
    if (this.verbatim) return value;
    const safe = neutralizeControlText(value);
    if (safe !== value) this.inert = true;
    return safe;
  };
}

export function modelSteps(input: ModelStepsInput): InfmemSteps {
  const { templates, completer, signal } = input;
  const chat = { ...input.chat, thinking: input.thinking };
  const options = { thinking: input.thinking, thinkClose: templates.thinkClose, temperature: input.temperature, topP: input.topP, signal };
  const ask = async (render: (slot: SlotValues['text']) => string, system: string | null) => {
    const values = new SlotValues(input.verbatim);
    const user = render(values.text);
    if (values.inert) await input.onInert?.();
    return replyTo(completer, chatText(user, system, chat), options);
  };
  return {
    initialMemory: templates.initialMemory,
    plan: (v) => ask((s) => pyFormat(templates.planner, { prompt: s(v.question), memory: s(v.memory), retrieval_history: s(v.hist) }), input.toolSystem),
    // The `[Retrieved #k]` framing is the official code's own: only the texts it frames are the book's.
    write: (v) =>
      ask(
        (s) =>
          pyFormat(templates.writer, {
            prompt: s(v.question),
            retrieval_history: s(v.hist),
            retrieve: retrievedBlock(v.passages.map(s)),
            chunk: s(v.chunk),
            memory: s(v.memory),
          }),
        null,
      ),
    answer: (v) => ask((s) => pyFormat(templates.final, { prompt: s(v.question), memory: s(v.memory) }), null),
  };
}

/** The steps, with `onTie` told before each write whose four units were cut inside a tie of equal scores. */
export function tellingTies(steps: InfmemSteps, onTie: () => void): InfmemSteps {
  return {
    ...steps,
    write: (view) => {
      if (view.tied) onTie();
      return steps.write(view);
    },
  };
}

/** The planner's reply before chunk `index`: what it asked for, and whether its vote ended the read. */
export interface PlanEvent {
  kind: 'plan';
  index: number;
  reply: Reply;
  stop: boolean;
  retrievals: Retrieval[];
  /** Votes to stop in a row so far (this reply's included). */
  votes: number;
  /** Whether the read ends here, before chunk `index` is written. */
  ends: boolean;
}

export interface WriteEvent {
  kind: 'write';
  index: number;
  reply: Reply;
  memory: string;
  /** The units retrieved for this chunk (the last call's), in rank order; empty when nothing was retrieved. */
  units: number[];
  /**
   * The last search's four were cut inside a tie of equal scores: the
   * official code, whose ties fall as the hardware orders them, may have
   * retrieved other units for this chunk.
   */
  tied: boolean;
  /** What a resume after this chunk needs besides the memory: the votes and the searches so far. */
  votes: number;
  history: Retrieval[];
}

export interface InfmemAnswerEvent {
  kind: 'answer';
  reply: Reply;
  /** The final reply after its thought. */
  final: string;
  /** The answer in it ("the answer is …"); '' when it gives none. */
  answer: string;
  /** Chunks the read got to: the one it stopped before counts, as the official `step` does. */
  step: number;
}

export type InfmemEvent = PlanEvent | WriteEvent | InfmemAnswerEvent;

export async function* infmemLoop(input: InfmemLoopInput): AsyncGenerator<InfmemEvent, void, void> {
  const { document, steps, signal } = input;
  const question = pyStrip(input.question);
  const asked = async (reply: Promise<Reply>) => {
    const done = await reply;
    if (signal?.aborted) throw abortError();
    return done;
  };
  const index = new UnitIndex(document.units);
  const { resume } = input;
  const counter = new StopCounter(input.earlyStop, resume?.votes);
  const history: Retrieval[] = [...(resume?.history ?? [])];
  const total = document.chunks.length;
  let memory = resume ? resume.memory : steps.initialMemory;
  let step = total;

  for (let t = resume?.nextChunk ?? 0; t < total; t++) {
    if (signal?.aborted) throw abortError();
    const hist = historyText(t, total, history);
    const plan = await asked(steps.plan({ question, memory, history, hist }));
    const parsed = parsePlannerReply(plan.text);
    const ends = counter.vote(parsed.stop, parsed.calls.length);
    const retrievals = ends ? [] : retrievalsOf(parsed, question);
    yield { kind: 'plan', index: t, reply: plan, stop: parsed.stop, retrievals, votes: counter.votes, ends };
    if (ends) {
      step = t + 1;
      break;
    }
    // Every call enters the history; only the last one's units reach the writer.
    let units: number[] = [];
    let tied = false;
    for (const r of retrievals) {
      history.push(r);
      ({ units, tied } = index.search(r.query));
    }
    if (signal?.aborted) throw abortError();
    const chunk = document.chunks[t]!.text;
    const write = await asked(steps.write({ question, memory, hist, units, retrieved: index.block(units), passages: index.texts(units), tied, chunk }));
    memory = memoryFromReply(write.text, 'verbatim');
    yield { kind: 'write', index: t, reply: write, memory, units, tied, votes: counter.votes, history: [...history] };
  }

  if (signal?.aborted) throw abortError();
  yield { kind: 'answer', ...(await finalAnswer(steps, { question, memory }, asked)), step };
}

/** What the final step gives: the reply, the final text after its thought, and the answer in it. */
export type FinalAnswer = Pick<InfmemAnswerEvent, 'reply' | 'final' | 'answer'>;

/**
 * The final step: one call answering the question from the memory, as a read
 * ends, and as a follow-up question to a finished read is answered. The
 * question is stripped as the loop strips it.
 */
export async function finalAnswer(
  steps: Pick<InfmemSteps, 'answer'>,
  view: { question: string; memory: string },
  asked: (reply: Promise<Reply>) => Promise<Reply> = (reply) => reply,
): Promise<FinalAnswer> {
  const reply = await asked(steps.answer({ question: pyStrip(view.question), memory: view.memory }));
  const final = memoryFromReply(reply.text, 'verbatim');
  return { reply, final, answer: extractAnswer(final, 'recurrent') ?? '' };
}
