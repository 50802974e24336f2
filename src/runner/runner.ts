import { planBudget } from '../core/budget';
import { chunkAll } from '../core/chunker';
import { isAbortError } from '../core/generation';
import { memoryLoop } from '../core/loop';
import { diffMemory } from '../core/memory-diff';
import { DEFAULT_TEMPLATES, INITIAL_MEMORY, type PromptTemplates, templateOverhead } from '../core/prompts';
import type { Tokenizer } from '../core/tokenizer';
import type { Engine } from '../engines/engine';
import { ingestBytes } from '../ingest/ingest';
import type { DocumentRecord, RunEvent, RunRecord, RunSettings, Store } from '../storage/db';
import { StaleRunError } from '../storage/db';
import { ImportError, parseExport } from '../storage/export';

export interface RunRequest {
  documentId: string;
  question: string;
  engineId: string;
  requestedChunkTokens: number;
  memoryTokens: number;
  temperature?: number;
  topP?: number;
  seed?: number;
  templates?: PromptTemplates;
}

export interface RunnerDeps {
  store: Store;
  createEngine(engineId: string): Promise<Engine>;
  tokenizerFor(engineId: string): Promise<Tokenizer>;
  publish(event: RunEvent): void;
  /** Runs `work` holding the run's lock, waiting for it if another tab holds it. */
  withLock?(name: string, work: () => Promise<void>): Promise<void>;
  newId?(): string;
}

/** A refusal the person can act on (the message says what to do). */
export class RunRequestError extends Error {
  override name = 'RunRequestError';
}

/**
 * Owns runs: plans them, drives the memory loop, and commits each revision
 * together with the run's progress before anyone is told about it.
 */
export class Runner {
  private readonly active = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private readonly engines = new Map<string, Promise<Engine>>();

  constructor(private readonly deps: RunnerDeps) {}

  async ingest(name: string, bytes: Uint8Array<ArrayBuffer>, engineId: string): Promise<DocumentRecord> {
    const doc = await ingestBytes(name, bytes);
    const tokenizer = await this.deps.tokenizerFor(engineId);
    return this.deps.store.addDocument(
      {
        id: doc.hash,
        name: doc.name,
        bytes: doc.bytes,
        encoding: doc.encoding,
        chars: doc.text.length,
        tokens: tokenizer.count(doc.text),
        addedAt: Date.now(),
      },
      doc.text,
    );
  }

  /** Validates a run export, then stores it whole; returns the run's id. */
  async importRun(json: string): Promise<string> {
    const { run, revisions, memories } = parseExport(json);
    if (await this.deps.store.getRun(run.id)) throw new ImportError('This run is already in this browser; open it from the list of runs.');
    await this.deps.store.importRun(run, revisions, memories);
    this.deps.publish({ type: 'status', runId: run.id, status: run.status });
    return run.id;
  }

  /** Plans and stores a run, then starts reading; returns its id once stored. */
  async start(request: RunRequest): Promise<string> {
    const question = request.question.trim();
    if (!question) throw new RunRequestError('Enter a question before reading: the memory keeps what helps answer it.');
    const { store } = this.deps;
    const doc = await store.getDocument(request.documentId);
    const text = doc && (await store.getText(doc.id));
    if (!doc || text === undefined) throw new RunRequestError('That document is no longer stored. Add the file again.');
    const engine = await this.engine(request.engineId);
    const templates = request.templates ?? { ...DEFAULT_TEMPLATES };
    const count = (s: string) => engine.tokenizer.count(s);
    let budget;
    try {
      budget = planBudget({
        contextWindow: engine.contextWindow,
        templateTokens: templateOverhead(templates.update, count),
        questionTokens: count(question),
        memoryTokens: request.memoryTokens,
        requestedChunkTokens: request.requestedChunkTokens,
      });
    } catch (e) {
      throw new RunRequestError((e as Error).message);
    }
    const settings: RunSettings = {
      requestedChunkTokens: request.requestedChunkTokens,
      chunkTokens: budget.chunkTokens,
      memoryTokens: budget.memoryTokens,
      contextTokens: budget.contextTokens,
      temperature: request.temperature ?? 0.7,
      topP: request.topP ?? 0.95,
      seed: request.seed,
    };
    const now = Date.now();
    const run: RunRecord = {
      id: this.deps.newId?.() ?? crypto.randomUUID(),
      documentId: doc.id,
      documentName: doc.name,
      question,
      engineId: request.engineId,
      settings,
      templates,
      chunks: chunkAll(text, engine.tokenizer, budget.chunkTokens),
      status: 'running',
      nextChunk: 0,
      memory: INITIAL_MEMORY,
      createdAt: now,
      updatedAt: now,
    };
    await store.createRun(run);
    this.deps.publish({ type: 'status', runId: run.id, status: 'running' });
    void this.execute(run.id);
    return run.id;
  }

  /** Continues a paused, cancelled, failed or interrupted run from its next chunk. */
  async resume(runId: string): Promise<void> {
    const run = await this.deps.store.getRun(runId);
    if (!run) throw new RunRequestError('That run is no longer stored.');
    if (run.status === 'done') return;
    if (run.status !== 'running') {
      await this.deps.store.setRunStatus(runId, 'running');
      this.deps.publish({ type: 'status', runId, status: 'running' });
    }
    void this.execute(runId);
  }

  async pause(runId: string): Promise<void> {
    await this.stop(runId, 'paused');
  }

  async cancel(runId: string): Promise<void> {
    await this.stop(runId, 'cancelled');
  }

  /** A pause or cancel that another tab asked for. */
  handleControl(event: RunEvent): void {
    if (event.type === 'control') this.active.get(event.runId)?.controller.abort();
  }

  private async stop(runId: string, status: 'paused' | 'cancelled'): Promise<void> {
    const run = await this.deps.store.getRun(runId);
    if (!run || run.status === 'done') return;
    await this.deps.store.setRunStatus(runId, status);
    this.active.get(runId)?.controller.abort();
    this.deps.publish({ type: 'control', runId, action: status === 'paused' ? 'pause' : 'cancel' });
    this.deps.publish({ type: 'status', runId, status });
  }

  private engine(engineId: string): Promise<Engine> {
    let e = this.engines.get(engineId);
    if (!e) {
      e = this.deps.createEngine(engineId);
      e.catch(() => this.engines.delete(engineId));
      this.engines.set(engineId, e);
    }
    return e;
  }

  /**
   * Reads a run to its end, holding its lock so that one tab writes it. A run
   * that is stopping finishes its current step before the next reader starts.
   */
  private execute(runId: string): Promise<void> {
    const current = this.active.get(runId);
    if (current && !current.controller.signal.aborted) return current.done;
    const controller = new AbortController();
    const work = () => this.read(runId, controller.signal);
    const done = (current?.done ?? Promise.resolve())
      .then(() => (this.deps.withLock ? this.deps.withLock(`memagent-run-${runId}`, work) : work()))
      .finally(() => {
        if (this.active.get(runId)?.controller === controller) this.active.delete(runId);
      });
    this.active.set(runId, { controller, done });
    return done;
  }

  private async read(runId: string, signal: AbortSignal): Promise<void> {
    const { store, publish } = this.deps;
    // State is read after the lock is held: another writer may have moved the run on.
    let run = await store.getRun(runId);
    if (!run || run.status !== 'running' || signal.aborted) return;
    try {
      const text = await store.getText(run.documentId);
      if (text === undefined) throw new Error('The document of this run is no longer stored. Add the file again and start a new run.');
      const engine = await this.engine(run.engineId);
      const loop = memoryLoop({
        text,
        chunks: run.chunks,
        question: run.question,
        generator: engine,
        templates: run.templates,
        memoryTokens: run.settings.memoryTokens,
        sampling: { temperature: run.settings.temperature, topP: run.settings.topP, seed: run.settings.seed },
        resume: { nextChunk: run.nextChunk, memory: run.memory },
        signal,
      });
      for await (const event of loop) {
        if (event.kind === 'revision') {
          const span = run.chunks[event.index]!;
          const change = diffMemory(run.memory, event.memory);
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
              retries: 0,
              committedAt: Date.now(),
            },
            event.memory,
          );
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
      }
    } catch (e) {
      if (isAbortError(e) || signal.aborted) return; // pause or cancel already recorded the status
      if (e instanceof StaleRunError) return; // another writer owns this run
      const message = e instanceof Error ? e.message : String(e);
      await store.setRunStatus(runId, 'failed', message);
      publish({ type: 'status', runId, status: 'failed', error: message });
    }
  }
}
