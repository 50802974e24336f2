import type { ChunkLease } from '../core/chunk-lists';
import { ChunkLists } from '../core/chunk-lists';
import type { TextGenerator } from '../core/generation';
import { APP_LOOP_METHOD, type LoopMethod, memoryLoop } from '../core/loop';
import { diffMemory } from '../core/memory-diff';
import { SkimIndex } from '../core/skim';
import { SkimFollower } from '../core/skim-follow';
import { Turns } from '../core/turns';
import type { RunEvent } from '../agent/events';
import type { Library } from '../library/library';
import type { RunProgress, RunRecord, Store } from '../storage/db';
import { engineKey } from '../jobs/engines';
import type { JobContext } from '../jobs/host';
import { mark } from '../jobs/marks';
import { WritingStream } from './writing-stream';

export interface RunReaderDeps {
  store: Store;
  library: Library;
  publish(event: RunEvent): void;
}

/**
 * How a run reads: the memory loop over its book's chunks, each revision
 * committed with the run's progress before any tab hears of it. Runs over one
 * book share its chunk list; runs on one engine that serves a request at a
 * time take turns, a step each.
 */
export class RunReader {
  /** The chunk lists of the books being read: runs over the same book share one, cut once. */
  readonly lists = new ChunkLists();
  /** Turns at each engine that serves one request at a time, by engine key: its runs read a step each in rotation. */
  private readonly turns = new Map<string, Turns>();
  /** The engine (by key) and question of each run reading here: a follow-up question does not cut in on it. */
  private readonly reading = new Map<string, { engineKey: string; question: string }>();

  constructor(private readonly deps: RunReaderDeps) {}

  /** The question of a run reading with this engine here, if any. */
  busyWith(key: string): string | undefined {
    return [...this.reading.values()].find((r) => r.engineKey === key)?.question;
  }

  /** Forgets a deleted book's chunk list. */
  forget(documentId: string): void {
    this.lists.forget(documentId);
  }

  private turnsAt(key: string): Turns {
    let t = this.turns.get(key);
    if (!t) this.turns.set(key, (t = new Turns()));
    return t;
  }

  async read(runId: string, job: JobContext): Promise<void> {
    const { signal } = job;
    const { store, publish, library } = this.deps;
    // State is read after the lock is held: another writer may have moved the run on.
    const loaded = await store.getRun(runId);
    if (!loaded || loaded.status !== 'running' || signal.aborted) return;
    let run: RunProgress = loaded;
    let writing: WritingStream | undefined;
    let lease: ChunkLease | undefined;
    /** Gives back this run's turn at the engine, once its step is stored. */
    let giveTurn: (() => void) | undefined;
    try {
      // The book most recently imported or read is at hand; another is read from storage.
      let text = await library.text(run.documentId);
      if (text === undefined) {
        const doc = await store.getDocument(run.documentId);
        text = doc && (await library.bookText(doc));
      }
      if (text === undefined) {
        // A book whose import was cut short is removed with its runs, this one included.
        if (!(await store.getRun(runId))) return;
        throw new Error('The document of this run is no longer stored. Add the file again and start a new run.');
      }
      mark('run-reading');
      const engine = await job.engine(run.engineId, run.engineConfig);
      this.reading.set(runId, { engineKey: engineKey(run.engineId, run.engineConfig), question: run.question });
      await engine.prepare?.(run.settings.contextTokens, signal);
      writing = new WritingStream((text) => publish({ type: 'writing', runId, index: run!.nextChunk, text }));
      // The loop reads this list; a skim that follows the memory grows it ahead of the reader.
      const plan = [...loaded.chunks];
      const listKey = { documentId: run.documentId, tokenizer: engine.tokenizer, chunkTokens: run.settings.chunkTokens };
      if (run.chunking) {
        // One list per book and chunk size, shared with the other runs reading it. Chunks cut so far
        // are stored on this run as the list reports them; a resume cuts the rest again.
        lease = this.lists.open(listKey, text, plan, (spans, done) => {
          const chunks = [...spans];
          void store
            .updateRun(runId, () => (done ? { chunks, chunking: undefined } : { chunks }))
            .then(() => publish({ type: 'chunks', runId, known: chunks.length, done }))
            .catch(() => undefined); // the next batch, or a resume, stores them again
        });
      }
      const follower = run.skim?.followMemory
        ? new SkimFollower(new SkimIndex(text, this.lists.whole(listKey, text)), run.question, run.memory, plan, run.skim)
        : null;
      // A model on this device serves one request at a time: its runs take turns, a whole step each
      // (request and commit), so that every question's memory moves on together. A server reads them at once.
      const turns = engine.parallel ? null : this.turnsAt(engineKey(run.engineId, run.engineConfig));
      const generator: TextGenerator = turns
        ? {
            generate: async (messages, options) => {
              giveTurn ??= await turns.take(signal);
              return engine.generate(messages, options);
            },
          }
        : engine;
      const loop = memoryLoop({
        text,
        chunks: lease ?? plan,
        question: run.question,
        generator,
        templates: run.templates,
        memoryTokens: run.settings.memoryTokens,
        sampling: { temperature: run.settings.temperature, topP: run.settings.topP, seed: run.settings.seed },
        resume: { nextChunk: run.nextChunk, memory: run.memory },
        // The answer is read as the prompt set's final template asks for it (runs from before prompt sets: leniently).
        method: loopMethod(run),
        signal,
        onToken: (delta) => writing?.add(delta),
      });
      for await (const event of loop) {
        writing?.reset();
        if (event.kind === 'revision') {
          const span = (lease ? lease.span(event.index) : plan[event.index])!;
          const change = diffMemory(run.memory, event.memory);
          const grew = follower?.follow(event.memory, event.index) ?? false;
          run = await store.commitRevision(
            {
              runId,
              index: event.index,
              memoryTokens: engine.tokenizer.count(event.memory),
              wordsAdded: change.wordsAdded,
              wordsRemoved: change.wordsRemoved,
              start: span.start,
              end: span.end,
              chunkTokens: span.tokens,
              promptTokens: event.result.usage.promptTokens,
              completionTokens: event.result.usage.completionTokens,
              ms: event.ms,
              finishReason: event.result.finishReason,
              retries: (event.result.retries ?? 0) + job.recoveries,
              prefillTokensPerSecond: event.result.usage.prefillTokensPerSecond,
              decodeTokensPerSecond: event.result.usage.decodeTokensPerSecond,
              timeToFirstTokenSeconds: event.result.usage.timeToFirstTokenSeconds,
              committedAt: Date.now(),
            },
            event.memory,
            grew ? [...plan] : undefined,
          );
          job.stored();
          publish({ type: 'revision', runId, index: event.index });
        } else {
          await store.updateRun(runId, () => ({
            status: 'done',
            answer: event.answer,
            reply: event.reply,
            error: undefined,
            finishedAt: Date.now(),
          }));
          publish({ type: 'status', runId, status: 'done' });
        }
        giveTurn?.();
        giveTurn = undefined;
      }
    } finally {
      writing?.reset(); // a stopped step's partial text is never announced
      this.reading.delete(runId);
      giveTurn?.();
      lease?.release();
    }
  }
}

/** How a run's loop reads and answers: this app's reading, with the answer read as its prompt set asks. */
export function loopMethod(run: Pick<RunRecord, 'prompts'>): LoopMethod {
  return { ...APP_LOOP_METHOD, answerStyle: run.prompts?.answerStyle ?? APP_LOOP_METHOD.answerStyle };
}
