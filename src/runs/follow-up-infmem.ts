/**
 * A follow-up question to a finished InfMem read, answered as the read
 * answered its own question: InfMem's final step (the official final prompt
 * continued by the model, with the read's thinking and sampling; or the
 * extractive engine's stand-in) on the read's final memory. Nothing is read
 * or retrieved again.
 */
import { finalAnswer } from '../core/infmem/loop';
import { REPLY_TOKENS, THINK_TOKENS } from '../core/infmem/thinking';
import type { Engine } from '../engines/engine';
import type { FollowUpRecord, RunRecord } from '../storage/db';
import { RequestError } from '../jobs/request-error';
import { finalStepFor, type InfmemReadDeps } from './read-infmem';

/** What the follow-up stores of the answer besides its question and place. */
export type AnswerStep = Pick<FollowUpRecord, 'answer' | 'reply' | 'promptTokens' | 'completionTokens' | 'finishReason' | 'ms'>;

export interface InfmemFollowUp {
  engine: Engine;
  run: RunRecord;
  question: string;
}

/** The answer to `question` from the run's final memory by InfMem's final step; a question with no room is refused in words. */
export async function infmemFollowUp(deps: Pick<InfmemReadDeps, 'store' | 'infmemFiles'>, { engine, run, question }: InfmemFollowUp): Promise<AnswerStep> {
  const count = (text: string) => engine.tokenizer.count(text);
  const thinking = run.method?.thinking ?? true;
  // The final request holds the question and the memory, then the thought and the reply; the read planned its window.
  const room = Math.min(run.settings.contextTokens, engine.contextWindow);
  const needed = count(question) + count(run.memory) + REPLY_TOKENS + (thinking && run.engineId !== 'extractive' ? THINK_TOKENS : 0);
  if (needed > room) {
    throw new RequestError(
      `This question is too long for the memory and the ${room}-token context this read used: shorten it by about ${needed - room} tokens.`,
    );
  }
  let step;
  try {
    step = await finalStepFor(deps, { engine, run, signal: new AbortController().signal });
  } catch (e) {
    if (e instanceof RequestError) throw e;
    throw new RequestError(`InfMem's final step could not be made ready, so nothing was answered: ${(e as Error).message}`);
  }
  // A read that wrote no chunk answered from the memory it starts with, which is the method's, not the stored run's.
  const memory = run.nextChunk > 0 ? run.memory : step.initialMemory;
  const t0 = performance.now();
  let done;
  try {
    done = await finalAnswer(step, { question, memory });
  } catch (e) {
    throw new RequestError(`The answer could not be written, and nothing was stored: ${(e as Error).message}`);
  }
  const { reply, final, answer } = done;
  // A server's counts where it gave them; else the tokens of what was sent and written (the stand-in sends nothing).
  const sent = reply.requests.length ? reply.requests.map((r) => r.prompt) : [question, memory];
  const promptTokens = reply.completions.reduce((n, c, i) => n + (c.promptTokens ?? count(sent[i] ?? '')), 0) || sent.reduce((n, s) => n + count(s), 0);
  const completionTokens = reply.completions.reduce((n, c) => n + (c.completionTokens ?? count(c.text)), 0) || count(reply.text);
  return { answer: answer || final, reply: final, promptTokens, completionTokens, finishReason: 'stop', ms: performance.now() - t0 };
}
