/**
 * One document read by InfMem's loop for an evaluation: what it answered,
 * how many chunks its writer read before the planner stopped it, and what
 * it cost (calls, tokens, time), counted the same way for a model's steps
 * and for the extractive engine's stand-ins.
 */
import { abortError } from '../core/generation';
import { infmemLoop, type InfmemSteps } from '../core/infmem/loop';
import type { InfmemDocument } from '../core/infmem/retrieval';
import type { Reply } from '../core/infmem/thinking';
import { pyStrip } from '../core/pytext';

/** The two reading methods an evaluation compares. */
export type EvalMethod = 'memagent' | 'infmem';

export const EVAL_METHODS: readonly EvalMethod[] = ['memagent', 'infmem'];

export const EVAL_METHOD_NAMES: Readonly<Record<EvalMethod, string>> = { memagent: 'MemAgent', infmem: 'InfMem' };

export interface InfmemReadInput {
  document: InfmemDocument;
  question: string;
  steps: InfmemSteps;
  earlyStop: number;
  /** Tokens of a text: what a step without a server's count was given and gave back. */
  count(text: string): number;
  signal?: AbortSignal;
  now?: () => number;
  /** After each chunk the writer read. */
  onStep?(step: { chunk: number; chunks: number }): void;
}

export interface InfmemReading {
  /** The final reply after its thought. */
  final: string;
  /** The loop's answer ("the answer is …"); '' when the reply gives none. */
  answer: string;
  /** Chunks of the document. */
  chunks: number;
  /** Chunks the writer read into the memory (the chunk a stop came before is not read). */
  chunksRead: number;
  /** The official code's `step`: the chunks the read got to, the one it stopped before included. */
  step: number;
  /**
   * Calls the engine answered: each HTTP completion a model's reply took
   * (two a call with thinking), one a call for steps that send no request.
   */
  requests: number;
  promptTokens: number;
  completionTokens: number;
  /** Time of the read up to the final answer (plans, retrieval with its index, writes), and of the final answer. */
  chunkMs: number;
  answerMs: number;
}

/** Reads one document by InfMem's loop, counting each call as it returns. */
export async function readInfmem(input: InfmemReadInput): Promise<InfmemReading> {
  const now = input.now ?? (() => performance.now());
  const out: InfmemReading = {
    final: '',
    answer: '',
    chunks: input.document.chunks.length,
    chunksRead: 0,
    step: 0,
    requests: 0,
    promptTokens: 0,
    completionTokens: 0,
    chunkMs: 0,
    answerMs: 0,
  };
  const tally = (given: readonly string[], reply: Reply) => {
    out.requests += reply.requests.length || 1;
    if (reply.completions.length > 0) {
      for (const c of reply.completions) {
        out.promptTokens += c.promptTokens ?? 0;
        out.completionTokens += c.completionTokens ?? 0;
      }
    } else {
      // No prompt was rendered (the extractive stand-ins): the texts the step was given stand for its prompt.
      out.promptTokens += given.reduce((n, s) => n + input.count(s), 0);
      out.completionTokens += input.count(reply.text);
    }
  };
  // The step is called inside the timing: a step that works synchronously does its work before returning its promise.
  const timed = async (given: readonly string[], step: () => Promise<Reply>, into: 'chunkMs' | 'answerMs') => {
    const t0 = now();
    const done = await step();
    // Counted inside the step's time, as an engine that counts its own prompts spends it inside its request.
    tally(given, done);
    out[into] += now() - t0;
    return done;
  };
  const { steps } = input;
  const counted: InfmemSteps = {
    initialMemory: steps.initialMemory,
    plan: (v) => timed([v.question, v.memory, v.hist], () => steps.plan(v), 'chunkMs'),
    write: (v) => timed([v.question, v.hist, v.retrieved, v.chunk, v.memory], () => steps.write(v), 'chunkMs'),
    answer: (v) => timed([v.question, v.memory], () => steps.answer(v), 'answerMs'),
  };
  const start = now();
  const loop = infmemLoop({ document: input.document, question: input.question, steps: counted, earlyStop: input.earlyStop, signal: input.signal });
  for await (const e of loop) {
    if (e.kind === 'write') {
      out.chunksRead++;
      input.onStep?.({ chunk: e.index + 1, chunks: out.chunks });
    } else if (e.kind === 'answer') {
      out.final = e.final;
      out.answer = e.answer;
      out.step = e.step;
    }
  }
  if (input.signal?.aborted) throw abortError();
  // The loop's own work between the steps (the BM25 index over the whole document, each retrieval) is the read's too.
  out.chunkMs = now() - start - out.answerMs;
  return out;
}

const PHRASE = 'the answer is';
const THINK_END = '</think>';
// The end-of-turn markers of DeepSeek-R1 distills that the scoring deletes from an answer.
const R1_MARKERS = ['<｜Assistant｜>', '<｜end▁of▁sentence｜>'];

/**
 * The answer InfMem's `ruler_hqa.py` scores in a final reply (the part after
 * the thought, as the loop returns it): stripped; cut after a `</think>` if
 * one is left; `*` deleted; the text after the last "the answer is" (case
 * as written), stripped, the R1 markers deleted, stripped, its dots at both
 * ends taken off, stripped. Null when it holds no such phrase or is empty:
 * the item scores 0.
 */
export function infmemPrediction(final: string): string | null {
  const response = pyStrip(final);
  const pred = response.includes(THINK_END) ? pyStrip(response.split(THINK_END).at(-1)!) : response;
  const text = (pred || response).replaceAll('*', '');
  const at = text.lastIndexOf(PHRASE);
  if (at < 0) return null;
  let answer = pyStrip(text.slice(at + PHRASE.length));
  for (const marker of R1_MARKERS) answer = answer.replaceAll(marker, '');
  return pyStrip(pyStrip(pyStrip(answer), '.'));
}
