import type { ChunkLease, ChunkListKey } from '../core/chunk-lists';
import { ChunkLists } from '../core/chunk-lists';
import { type TextGenerator, withOwnTuner } from '../core/generation';
import { firstChunk, type ChunkSpan } from '../core/chunker';
import { type AnswerEvent, appLoopMethod, type LoopInput, memoryLoop, type RevisionEvent } from '../core/loop';
import { diffMemory } from '../core/memory-diff';
import { SkimIndex } from '../core/skim';
import { SkimFollower } from '../core/skim-follow';
import { type BatchMember, limitInFlight, StepBatcher } from '../core/batch';
import { batchSender } from '../engines/batch-sender';
import type { Engine } from '../engines/engine';
import type { RunEvent } from '../agent/events';
import type { Library } from '../library/library';
import type { RunBook, RunProgress, RunRecord, Store } from '../storage/db';
import { RUN_ANSWER } from '../storage/schema';
import { engineKey } from '../jobs/engines';
import type { JobContext } from '../jobs/host';
import type { StepHold } from '../jobs/step-hold';
import { mark } from '../jobs/marks';
import { WritingStream } from './writing-stream';
import { infmemJob, type InfmemReadDeps } from './read-infmem';
import { loadSet, SetChunkSource, setChunks, SetText } from './book-set';
import type { SourceFinder } from './sources';

export interface RunReaderDeps {
  store: Store;
  library: Library;
  publish(event: RunEvent): void;
  /** Where a step waits while a test holds it (see StepHold); none in unit tests. */
  hold?: StepHold;
  /** Traces an answer's sources once it is stored; without it, none are. */
  sources?: Pick<SourceFinder, 'trace'>;
  /** InfMem's pinned files, for a model's InfMem read. */
  infmemFiles?: InfmemReadDeps['infmemFiles'];
}

/** Where a run's book comes from (see RunReader.bookInput). */
interface BookInput {
  arriving: ReturnType<Library['arriving']>;
  bookByBook: SetText | undefined;
  text: string | undefined;
}

/** The text and chunks a run's loop reads, and where each chunk's span is found (see RunReader.bookSource). */
interface BookSource {
  /** Undefined only where the book went with the run. */
  book: LoopInput['text'] | undefined;
  chunks: LoopInput['chunks'];
  /** The chunks stored on the run: the loop's list, which a skim that follows the memory grows. */
  plan: ChunkSpan[];
  /** The whole text, where it is at hand. */
  text: string | undefined;
  listKey: ChunkListKey;
  spanAt(index: number): ChunkSpan | undefined;
  /** A chunk list shared with other runs, once opened: released when the read ends. */
  lease?: ChunkLease;
}

/** One revision of the loop to store, with what the read knows. */
interface RevisionStep {
  run: RunProgress;
  event: RevisionEvent;
  engine: Engine;
  job: JobContext;
  source: BookSource;
  follower: SkimFollower | null;
}

/**
 * How a run reads: the memory loop over its book's chunks, each revision
 * committed with the run's progress before any tab hears of it. Runs over one
 * book share its chunk list; runs on one engine write their steps together
 * (see StepBatcher), a step each.
 */
export class RunReader {
  /** The chunk lists of the books being read: runs over the same book share one, cut once. */
  readonly lists = new ChunkLists();
  /**
   * The step batch of each engine: the runs reading on it ask it
   * for their steps, which are written together (one batch of sequences, a
   * server's concurrent requests) or in turns, so every memory moves on together.
   */
  private readonly batchers = new WeakMap<Engine, StepBatcher>();
  /** The requests of every run on each server engine, at most its `requestsAtOnce` in flight together. */
  private readonly bounded = new WeakMap<Engine, TextGenerator>();
  /** The engine (by key) and question of each run reading here: a follow-up question does not cut in on it. */
  private readonly reading = new Map<string, { engineKey: string; question: string }>();

  /** Places in a step batch held for runs about to read, by run id (see reserve). */
  private readonly reserved = new Map<string, BatchMember>();

  /** Imports held back for runs about to read (see Library.holdImports), by run id: released when the run's first step begins. */
  private readonly starting = new Map<string, () => void>();

  constructor(private readonly deps: RunReaderDeps) {}

  /** Imports stay held back (`release`) until run `runId` begins its first step here, or cannot. */
  startSoon(runId: string, release: () => void): void {
    this.starting.set(runId, release);
  }

  /**
   * Holds a place in `engine`'s step batch for each of the runs of one read,
   * before any of them reads, so that the first step waits for all their
   * questions. A place the run never takes is given up by `unreserve`.
   */
  async reserve(runIds: readonly string[], engine: Engine, contextTokens: number): Promise<void> {
    if (engine.parallel) return;
    const join = await this.batchJoiner(engine, contextTokens);
    for (const id of runIds) this.reserved.set(id, join());
  }

  /** Gives up a run's held place, where its reading never took it (it was stopped before it began). */
  unreserve(runId: string): void {
    this.reserved.get(runId)?.leave();
    this.reserved.delete(runId);
  }

  /** The question of a run reading with this engine here, if any. */
  busyWith(key: string): string | undefined {
    return [...this.reading.values()].find((r) => r.engineKey === key)?.question;
  }

  /** Forgets a deleted book's chunk list. */
  forget(documentId: string): void {
    this.lists.forget(documentId);
  }

  /**
   * Joins `engine`'s step batch with its batch size for runs of
   * `contextTokens`, worked out for each read at its own context: a read of
   * longer steps that joins a batch keeps it to its own size while it reads.
   */
  private async batchJoiner(engine: Engine, contextTokens: number): Promise<() => BatchMember> {
    // A size that cannot be worked out leaves the batch unbounded: the engine writes what it is given.
    const limit = (await engine.batchLimit?.(contextTokens).catch(() => undefined))?.size;
    let b = this.batchers.get(engine);
    if (!b) this.batchers.set(engine, (b = new StepBatcher(batchSender(engine))));
    const batcher = b;
    return () => batcher.join(limit);
  }

  /** A server engine's requests, shared by every run on it: at most its `requestsAtOnce` in flight, the rest waiting their turn. */
  private serverTurns(engine: Engine): TextGenerator {
    let turns = this.bounded.get(engine);
    if (!turns) this.bounded.set(engine, (turns = limitInFlight(engine, engine.requestsAtOnce)));
    return turns;
  }

  /**
   * The whole text of a run's book: the one most recently imported or read is
   * at hand, another is read from storage. Undefined (the run removed with it)
   * where an import was cut short; a book no longer stored is an error.
   */
  private async bookText(run: RunProgress): Promise<string | undefined> {
    const { store, library } = this.deps;
    if (run.books) {
      // A skim of a set ranks and follows across the whole set: its books joined into one text.
      const ids = run.books.map((b) => b.documentId);
      // A set that cannot be loaded is told apart below: a run deleted meanwhile, or a book no longer stored.
      const joined = await loadSet(store, library, ids).catch(() => undefined);
      if (joined !== undefined || !(await store.getRun(run.id))) return joined?.text;
      throw new Error('A book of this run is no longer stored. Add the file again and start a new run.');
    }
    let text = await library.text(run.documentId);
    if (text === undefined) {
      const doc = await store.getDocument(run.documentId);
      text = doc && (await library.bookText(doc));
    }
    if (text !== undefined) return text;
    // A book whose import was cut short is removed with its runs, this one included.
    if (!(await store.getRun(run.id))) return undefined;
    throw new Error('The document of this run is no longer stored. Add the file again and start a new run.');
  }

  /** A book of a run over a set, read when the reading reaches it; undefined when it is no longer stored. */
  private async setBook(book: RunBook): Promise<string | undefined> {
    const { store, library } = this.deps;
    const text = await library.text(book.documentId);
    if (text !== undefined) return text;
    const doc = await store.getDocument(book.documentId);
    return doc && library.bookText(doc);
  }

  async read(runId: string, job: JobContext): Promise<void> {
    const { signal } = job;
    const { store, publish, library } = this.deps;
    // State is read after the lock is held: another writer may have moved the run on.
    // A file being imported meanwhile waits until this run's first step has begun.
    const releaseImports = this.starting.get(runId) ?? library.holdImports();
    this.starting.delete(runId);
    const loaded = await store.getRun(runId);
    if (!loaded || loaded.status !== 'running' || signal.aborted) return releaseImports();
    const trace = () => this.deps.sources?.trace(runId, [RUN_ANSWER]) ?? Promise.resolve();
    if (loaded.method) return infmemJob(this.deps, { run: loaded, job, bookText: (r) => this.bookText(r), release: releaseImports, trace });
    let run: RunProgress = loaded;
    let writing: WritingStream | undefined;
    let source: BookSource | undefined;
    /** This run's place in its engine's step batch, left however the read ends. */
    let member: BatchMember | undefined;
    let answered = false;
    try {
      const input = await this.bookInput(loaded);
      if (!input) return;
      mark('run-reading');
      const engine = await job.engine(run.engineId, run.engineConfig);
      this.reading.set(runId, { engineKey: engineKey(run.engineId, run.engineConfig), question: run.question });
      // Every run on an engine of this device asks the same batch for its steps: a step waits for the other runs'
      // (their memories written in the same passes where the engine batches, else in turns), so all move on
      // together. Joined before the model loads, so the questions of one read start together. A server gets
      // every run's requests as they come, up to its bound at once: it batches them itself.
      member = this.reserved.get(runId);
      this.reserved.delete(runId);
      const batch: TextGenerator = engine.parallel ? this.serverTurns(engine) : (member ??= (await this.batchJoiner(engine, run.settings.contextTokens))());
      await engine.prepare?.(run.settings.contextTokens, signal);
      writing = new WritingStream((text) => publish({ type: 'writing', runId, index: run.nextChunk, text }), signal);
      source = await this.bookSource(loaded, engine, input);
      const book = source?.book;
      if (!source || book === undefined) return;
      const follower = this.skimFollower(run, engine, source);
      // A tuner of the run's own: another run on the same engine reads another text, and its drafts are right elsewhere.
      const generator: TextGenerator = withOwnTuner({
        generate: async (messages, options) => {
          releaseImports();
          await this.deps.hold?.before(runId, run.nextChunk, signal);
          return batch.generate(messages, options);
        },
      });
      const loop = memoryLoop({
        text: book,
        chunks: source.chunks,
        question: run.question,
        generator,
        templates: run.templates,
        memoryTokens: run.settings.memoryTokens,
        sampling: { temperature: run.settings.temperature, topP: run.settings.topP, seed: run.settings.seed },
        resume: { nextChunk: run.nextChunk, memory: run.memory },
        // The answer is read as the prompt set's final template asks for it (runs from before prompt sets: leniently).
        method: appLoopMethod(run.prompts?.answerStyle),
        signal,
        onToken: (delta) => writing?.add(delta),
      });
      for await (const event of loop) {
        writing?.reset();
        if (event.kind === 'revision') run = await this.storeRevision({ run, event, engine, job, source, follower });
        else {
          await this.storeAnswer(runId, event);
          answered = true;
        }
      }
    } finally {
      releaseImports();
      writing?.reset(); // a stopped step's partial text is never announced
      this.reading.delete(runId);
      member?.leave();
      source?.lease?.release();
    }
    // The answer is stored and told: its sources follow. A failure here leaves them to be traced when the run is shown.
    if (answered) await this.deps.sources?.trace(runId, [RUN_ANSWER]).catch(() => undefined);
  }

  /**
   * Where a run's book comes from: a book still arriving from its file (a
   * read from its start cuts the first chunk from what has arrived), a set
   * read book by book as the reading reaches each (SetText, never joined), or
   * the whole text. Undefined where the book went with the run.
   */
  private async bookInput(run: RunRecord): Promise<BookInput | undefined> {
    const arriving =
      run.chunking && !run.skim && !run.books && run.nextChunk === 0 && run.chunks.length === 0 ? this.deps.library.arriving(run.documentId) : undefined;
    const bookByBook = run.books && !run.skim ? new SetText(run.books, (b) => this.setBook(b)) : undefined;
    const text = arriving || bookByBook ? undefined : await this.bookText(run);
    if (!arriving && !bookByBook && text === undefined) return undefined;
    return { arriving, bookByBook, text };
  }

  /**
   * The text and chunks the loop reads: the chunks stored on the run, then
   * one list per book and chunk size, shared with the other runs reading it
   * (the chunks cut so far stored on this run as the list reports them; a
   * resume cuts the rest again). Undefined where the book went with the run.
   */
  private async bookSource(run: RunRecord, engine: Engine, input: BookInput): Promise<BookSource | undefined> {
    const { store, publish } = this.deps;
    const { arriving, bookByBook } = input;
    let { text } = input;
    // The loop reads this list; a skim that follows the memory grows it ahead of the reader.
    const plan = [...run.chunks];
    const listKey = { documentId: run.documentId, tokenizer: engine.tokenizer, chunkTokens: run.settings.chunkTokens };
    const storeCut = (spans: readonly ChunkSpan[], done: boolean) => {
      const chunks = [...spans];
      void store
        .updateRun(run.id, () => (done ? { chunks, chunking: undefined } : { chunks }))
        .then(() => publish({ type: 'chunks', runId: run.id, known: chunks.length, done }))
        .catch(() => undefined); // the next batch, or a resume, stores them again
    };
    const openList = (whole: string, known: readonly ChunkSpan[]): ChunkLease => this.lists.open(listKey, whole, known, storeCut);
    // Cut from a little more than a chunk's text first; from more where a token holds more characters.
    const cut = (reach: number) => arriving && firstChunk(arriving.start, engine.tokenizer, run.settings.chunkTokens, reach * run.settings.chunkTokens);
    const first = cut(5) || cut(16);
    if (arriving && !first) text = await this.bookText(run);
    const source: BookSource = {
      book: text,
      chunks: plan,
      plan,
      text,
      listKey,
      spanAt: (index) => (index === 0 && first ? first : source.lease ? source.lease.span(index) : plan[index]),
    };
    if (bookByBook) {
      // Its chunks as stored, then cut on where the reading reaches books not cut yet; each chunk's book is loaded before it is read.
      const onCut = run.chunking ? storeCut : () => undefined;
      source.book = bookByBook;
      source.chunks = source.lease = new SetChunkSource(bookByBook, { tokenizer: engine.tokenizer, chunkTokens: run.settings.chunkTokens, known: plan, onCut });
    } else if (arriving && first) {
      // The rest of the list is cut from the whole text, once decoded, after this first chunk.
      let whole: string | undefined;
      source.book = { slice: (start, end) => (whole ?? arriving.start).slice(start, end) };
      source.chunks = {
        at: async (index) => {
          if (index === 0) return first;
          whole ??= await arriving.whole;
          if (whole === undefined) throw new Error('The document of this run is no longer stored. Add the file again and start a new run.');
          source.lease ??= openList(whole, [first]);
          return source.lease.at(index);
        },
      };
    } else if (run.chunking) source.chunks = source.lease = openList(text!, plan);
    if (source.book !== undefined) return source;
    source.lease?.release();
    return undefined;
  }

  /** A skim that follows the memory: the chunks it adds to the plan as names and terms come up; null for any other read. */
  private skimFollower(run: RunProgress, engine: Engine, source: BookSource): SkimFollower | null {
    if (!run.skim?.followMemory) return null;
    const text = source.text!;
    const spans = run.books ? setChunks(text, run.books, engine.tokenizer, run.settings.chunkTokens) : this.lists.whole(source.listKey, text);
    return new SkimFollower(new SkimIndex(text, spans), source.plan, { ...run.skim, question: run.question, memory: run.memory });
  }

  /** Commits a revision with the run's progress (and the plan a skim grew), then tells every tab; gives the run as stored. */
  private async storeRevision(step: RevisionStep): Promise<RunProgress> {
    const { run, event, engine, job, source, follower } = step;
    const span = source.spanAt(event.index)!;
    const change = diffMemory(run.memory, event.memory);
    const grew = follower?.follow(event.memory, event.index) ?? false;
    const { usage } = event.result;
    const stored = await this.deps.store.commitRevision(
      {
        runId: run.id,
        index: event.index,
        memoryTokens: engine.tokenizer.count(event.memory),
        wordsAdded: change.wordsAdded,
        wordsRemoved: change.wordsRemoved,
        start: span.start,
        end: span.end,
        chunkTokens: span.tokens,
        promptTokens: usage.promptTokens,
        completionTokens: usage.completionTokens,
        ms: event.ms,
        finishReason: event.result.finishReason,
        retries: (event.result.retries ?? 0) + job.recoveries,
        prefillTokensPerSecond: usage.prefillTokensPerSecond,
        decodeTokensPerSecond: usage.decodeTokensPerSecond,
        timeToFirstTokenSeconds: usage.timeToFirstTokenSeconds,
        writing: usage.writing,
        committedAt: Date.now(),
      },
      event.memory,
      grew ? [...source.plan] : undefined,
    );
    job.stored();
    this.deps.publish({ type: 'revision', runId: run.id, index: event.index });
    return stored;
  }

  /** Stores the run's answer, done, and tells every tab. */
  private async storeAnswer(runId: string, event: AnswerEvent): Promise<void> {
    await this.deps.store.updateRun(runId, () => ({
      status: 'done',
      answer: event.answer,
      reply: event.reply,
      error: undefined,
      finishedAt: Date.now(),
    }));
    this.deps.publish({ type: 'status', runId, status: 'done' });
  }
}
