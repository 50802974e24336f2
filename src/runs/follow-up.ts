import { answerFromMemory, appLoopMethod } from '../core/loop';
import { finalPrompt } from '../core/prompts';
import type { RunEvent } from '../agent/events';
import type { Engine } from '../engines/engine';
import type { FollowUpRecord, RunRecord, Store } from '../storage/db';
import { StaleRunError } from '../storage/db';
import { type EngineCache, engineKey } from '../jobs/engines';
import { RequestError } from '../jobs/request-error';
import { type RunReader } from './read';
import type { SourceFinder } from './sources';
import { WritingStream } from './writing-stream';
import { type AnswerStep, infmemFollowUp } from './follow-up-infmem';
import type { InfmemReadDeps } from './read-infmem';

export interface FollowUpDeps {
  store: Store;
  engines: EngineCache;
  reader: Pick<RunReader, 'busyWith'>;
  publish(event: RunEvent): void;
  /** Traces the answer's sources once it is stored; without it, none are. */
  sources?: Pick<SourceFinder, 'trace'>;
  /** InfMem's pinned files: a model's InfMem read answers follow-ups with their final prompt. */
  infmemFiles?: InfmemReadDeps['infmemFiles'];
}

/** Further questions to a finished run, answered from its final memory. */
export class FollowUps {
  /** Follow-up answers being written, by engine key: one request at a time per engine. */
  private readonly answering = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: FollowUpDeps) {}

  /**
   * Answers a new question from a finished run's final memory: the run's own
   * answer step (its final template, engine, memory size and sampling; for an
   * InfMem read, InfMem's final step), with no reading. The answer is stored with the run before anyone hears of it;
   * a failure stores nothing and says why in words.
   */
  async ask(runId: string, question: string, onToken?: (text: string) => void): Promise<FollowUpRecord> {
    const asked = question.trim();
    if (!asked) throw new RequestError('Type a question first: it is answered from the memory this read kept.');
    const { store, publish } = this.deps;
    const run = await store.getRun(runId);
    if (!run) throw new RequestError('That run is no longer stored.');
    if (run.status !== 'done') {
      throw new RequestError('This read has not finished: a follow-up question is answered from its final memory, which exists once the read is done.');
    }
    const key = engineKey(run.engineId, run.engineConfig);
    const busy = this.deps.reader.busyWith(key);
    if (busy !== undefined) {
      throw new RequestError(`The engine is busy reading for "${busy}". Ask again when that read has finished, or pause it first.`);
    }
    // One answer at a time per engine: a second question waits for the first.
    const before = this.answering.get(key) ?? Promise.resolve();
    // The question before this one reported its own failure to its asker; this one goes ahead either way.
    const work = before.catch(() => undefined).then(() => this.answerFollowUp(run, asked, onToken));
    this.answering.set(key, work);
    void work
      // The asker sees the failure through `work`; this branch only frees the engine's turn.
      .catch(() => undefined)
      .finally(() => {
        if (this.answering.get(key) === work) this.answering.delete(key);
      });
    const record = await work;
    publish({ type: 'followUp', runId, index: record.index });
    // Its sources follow; a failure leaves them to be traced when the answer is shown.
    await this.deps.sources?.trace(runId, [record.index]).catch(() => undefined);
    return record;
  }

  private async answerFollowUp(run: RunRecord, question: string, onToken?: (text: string) => void): Promise<FollowUpRecord> {
    let engine: Engine;
    try {
      engine = await this.deps.engines.open(run.engineId, run.engineConfig);
      // InfMem's steps make the engine ready as its read did.
      if (!run.method) await engine.prepare?.(run.settings.contextTokens);
    } catch (e) {
      throw new RequestError(`The engine of this read could not be started, so nothing was answered: ${(e as Error).message}`);
    }
    const step = run.method ? await infmemFollowUp(this.deps, { engine, run, question }) : await this.memagentAnswer(engine, run, question, onToken);
    try {
      return await this.deps.store.addFollowUp({ runId: run.id, question, ...step, memoryIndex: run.nextChunk - 1, askedAt: Date.now() });
    } catch (e) {
      if (e instanceof StaleRunError) throw new RequestError(e.message);
      throw e;
    }
  }

  /** MemAgent's answer step on the final memory: the run's final template, memory size and sampling. */
  private async memagentAnswer(engine: Engine, run: RunRecord, question: string, onToken?: (text: string) => void): Promise<AnswerStep> {
    // The run planned its window for its own question; a longer one must still leave room for the reply.
    const promptTokens = engine.tokenizer.count(finalPrompt(run.templates, question, run.memory));
    const room = Math.min(run.settings.contextTokens, engine.contextWindow);
    if (promptTokens + run.settings.memoryTokens > room) {
      const over = promptTokens + run.settings.memoryTokens - room;
      throw new RequestError(`This question is too long for the memory and the ${room}-token context this read used: shorten it by about ${over} tokens.`);
    }
    const writing = onToken ? new WritingStream(onToken) : undefined;
    let step;
    try {
      step = await answerFromMemory({
        question,
        memory: run.memory,
        generator: engine,
        templates: run.templates,
        memoryTokens: run.settings.memoryTokens,
        sampling: { temperature: run.settings.temperature, topP: run.settings.topP, seed: run.settings.seed },
        onToken: writing && ((delta) => writing.add(delta)),
        method: appLoopMethod(run.prompts?.answerStyle),
      });
    } catch (e) {
      throw new RequestError(`The answer could not be written, and nothing was stored: ${(e as Error).message}`);
    } finally {
      writing?.reset();
    }
    return {
      answer: step.answer,
      reply: step.reply,
      promptTokens: step.result.usage.promptTokens,
      completionTokens: step.result.usage.completionTokens,
      finishReason: step.result.finishReason,
      ms: step.ms,
    };
  }
}
