import type { RunEvent } from '../agent/events';
import type { Library } from '../library/library';
import type { FollowUpRecord, RunProgress, RunRecord, Store } from '../storage/db';
import { ImportError, parseExport } from '../storage/export';
import { contentHash } from '../storage/schema';
import type { EngineCache } from '../jobs/engines';
import { JobHost, type JobHostDeps } from '../jobs/host';
import { RequestError } from '../jobs/request-error';
import { mark } from '../jobs/marks';
import type { StepHold } from '../jobs/step-hold';
import { FollowUps } from './follow-up';
import { relinkBooks } from './book-set';
import type { MemorySources, RunRequest } from '../agent/protocol';
import { planRuns } from './plan';
import type { PromptLibrary } from './prompt-files';
import type { InfmemFileLibrary } from './infmem-files';
import { RunReader } from './read';
import { SourceFinder } from './sources';

export interface RunsDeps {
  store: Store;
  library: Library;
  engines: EngineCache;
  publish(event: RunEvent): void;
  /** Runs `work` holding the run's lock, waiting for it if another tab holds it. */
  withLock?: JobHostDeps['withLock'];
  newId?(): string;
  /** The MemAgent prompt files; without it only this app's wording and edited templates can be used. */
  prompts?: PromptLibrary;
  /** InfMem's pinned files; without it InfMem reads with the extractive engine only. */
  infmemFiles?: InfmemFileLibrary;
  /** Where a step waits while a test holds it (see StepHold). */
  hold?: StepHold;
}

/**
 * The runs of this worker: each is planned and stored, then read as a job of
 * the job host (one writer across tabs, stopped and resumed from storage), its
 * revisions committed before anyone is told; finished runs answer follow-ups.
 */
export class Runs {
  /** Each run's life: start, pause, resume, cancel (see JobHost). */
  readonly jobs: JobHost;
  private readonly reader: RunReader;
  private readonly followUps: FollowUps;
  /** Where answers' facts came from, traced once each answer is stored. */
  private readonly sources: SourceFinder;

  constructor(private readonly deps: RunsDeps) {
    const { store, publish } = deps;
    this.sources = new SourceFinder(deps);
    this.reader = new RunReader({ ...deps, sources: this.sources });
    this.followUps = new FollowUps({ ...deps, reader: this.reader, sources: this.sources });
    this.jobs = new JobHost(
      {
        lockName: (id) => `memagent-run-${id}`,
        status: async (id) => (await store.getRun(id))?.status,
        setStatus: (id, status, error) => store.setRunStatus(id, status, error),
        announce: (runId, status, error) => publish({ type: 'status', runId, status, ...(error !== undefined && { error }) }),
        control: (runId, action) => publish({ type: 'control', runId, action }),
        read: (id, job) => this.reader.read(id, job),
        words: { noun: 'run', continuesFrom: 'its last saved revision' },
      },
      deps,
    );
    // A book being deleted: its runs stop reading here first.
    deps.library.onDelete(async (documentId) => {
      this.reader.forget(documentId);
      for (const run of await store.listRuns())
        if (run.documentId === documentId || run.books?.some((b) => b.documentId === documentId)) this.jobs.abort(run.id);
    });
  }

  /** Plans and stores a run, then starts reading; returns its id once stored. */
  async start(request: RunRequest): Promise<string> {
    return (await this.startMany(request, [request.question]))[0]!;
  }

  /**
   * Several questions about one book: one run per question, planned together
   * (planRuns). On an engine that serves one request at a time the runs take
   * turns, a step each; on a server they are read at once. Returns the runs'
   * ids, in the questions' order, once all are stored.
   */
  async startMany(request: Omit<RunRequest, 'question'>, questions: readonly string[]): Promise<string[]> {
    mark('run-requested', true);
    const { store } = this.deps;
    // A file being imported waits until the first run's first step has begun.
    const releaseImports = this.deps.library.holdImports();
    const created: string[] = [];
    let runs: RunRecord[];
    try {
      runs = await planRuns({ ...this.deps, lists: this.reader.lists }, request, questions);
      for (const run of runs) {
        await store.createRun(run);
        created.push(run.id);
      }
    } catch (e) {
      releaseImports();
      // All the questions' runs or none: a read that could not store its last run leaves no other behind.
      for (const id of created) await store.deleteRun(id).catch(() => undefined);
      throw e;
    }
    mark('run-stored');
    this.reader.startSoon(runs[0]!.id, releaseImports);
    await this.together(runs, (id) => this.jobs.begin(id));
    return runs.map((r) => r.id);
  }

  /**
   * Starts or resumes the runs of one read with each one's place in its
   * engine's step batch held first, so that all their questions are written
   * from the same step on. A run that never reads gives its place up once its
   * job has ended; one that cannot begin gives it up at once, so it holds no
   * other up. The others begin all the same, and the first failure is thrown
   * once they have.
   */
  private async together(runs: readonly RunProgress[], begin: (id: string) => Promise<void> | void): Promise<void> {
    const first = runs[0];
    // InfMem's runs take no step batch: each plans, stops and ends on its own.
    const batched = first && runs.length > 1 && !first.method;
    // An engine that cannot be opened now fails in each run's own reading, where it is reported.
    const engine = batched ? await this.deps.engines.open(first.engineId, first.engineConfig).catch(() => undefined) : undefined;
    if (engine)
      await this.reader.reserve(
        runs.map((r) => r.id),
        engine,
        first!.settings.contextTokens,
      );
    let failed: { error: unknown } | undefined;
    for (const run of runs) {
      try {
        await begin(run.id);
      } catch (error) {
        failed ??= { error };
      } finally {
        void this.jobs.settled(run.id).then(() => this.reader.unreserve(run.id));
      }
    }
    if (failed) throw failed.error;
  }

  /** Resumes every run that storage says is reading (after a reload or a crash), the questions of each read together. */
  async resumeReading(): Promise<void> {
    const reading = (await this.deps.store.listRuns()).filter((r) => r.status === 'running');
    const reads = new Map<string, RunRecord[]>();
    for (const run of reading) {
      const key = run.readId ?? run.id;
      reads.set(key, [...(reads.get(key) ?? []), run]);
    }
    for (const runs of reads.values()) {
      // Listed newest first: a read's questions, whose runs are apart by a millisecond each, in the order asked.
      await this.together(runs, (id) => this.jobs.resume(id).catch((e: unknown) => console.warn(`Resuming run ${id} failed:`, e)));
    }
  }

  /** Resumes the runs of a read that are paused, stopped or failed, together (see together); a finished one stays as it is. */
  async resumeRead(readId: string): Promise<void> {
    const runs = (await this.deps.store.listRuns()).filter((r) => r.readId === readId && r.status !== 'done');
    await this.together(runs, (id) => this.jobs.resume(id));
  }

  /** Pauses every question of a read that is reading (one press of Pause for the whole read). */
  async pauseRead(readId: string): Promise<void> {
    for (const run of await this.runsOfRead(readId)) if (run.status === 'running') await this.jobs.pause(run.id);
  }

  /** Cancels every question of a read that is reading or paused. */
  async cancelRead(readId: string): Promise<void> {
    for (const run of await this.runsOfRead(readId)) if (run.status === 'running' || run.status === 'paused') await this.jobs.cancel(run.id);
  }

  /** Deletes every question of a read, none of them reading (as for one run, Pause or Cancel comes first). */
  async deleteRead(readId: string): Promise<void> {
    const runs = await this.runsOfRead(readId);
    if (runs.some((r) => r.status === 'running')) throw new RequestError('A question of this read is still reading: pause or cancel the read, then delete it.');
    for (const run of runs) await this.deleteRun(run.id);
  }

  private async runsOfRead(readId: string): Promise<RunRecord[]> {
    return (await this.deps.store.listRuns()).filter((r) => r.readId === readId);
  }

  /** Deletes a run with its revisions and memories (its document stays); a reader of it, here or in another tab, stops first. */
  async deleteRun(runId: string): Promise<void> {
    this.jobs.abort(runId);
    this.sources.forget(runId);
    this.deps.publish({ type: 'control', runId, action: 'cancel' });
    await this.deps.store.deleteRun(runId);
    // Other tabs re-read their lists on a status event; the run is no longer in storage.
    this.deps.publish({ type: 'status', runId, status: 'cancelled' });
  }

  /**
   * What another tab did. A pause or cancel stops the reader here. A run that
   * starts reading there gets a standby here, waiting for the run's lock: if
   * that tab closes or crashes, this one carries on from the next chunk.
   */
  handleControl(event: RunEvent): void {
    if (event.type === 'control') this.jobs.abort(event.runId);
    else if (event.type === 'status' && event.status === 'running') this.jobs.standBy(event.runId);
  }

  /** Answers a new question from a finished run's final memory, stored with the run (see FollowUps). */
  async askFollowUp(runId: string, question: string, onToken?: (text: string) => void): Promise<FollowUpRecord> {
    return this.followUps.ask(runId, question, onToken);
  }

  /** Validates a run export, then stores it whole; returns the run's id. */
  async importRun(json: string): Promise<string> {
    const { run, revisions, memories, followUps, sources, documentSha256 } = parseExport(json);
    const { store } = this.deps;
    if (await store.getRun(run.id)) throw new ImportError('This run is already in this browser; open it from the list of runs.');
    // The same book here, known by its hash (an older export's documentId is that hash): the run refers to it.
    const sha256 = documentSha256 ?? run.documentId;
    if (!(await store.getDocument(run.documentId))) {
      const here = (await store.listDocuments()).find((d) => contentHash(d) === sha256);
      if (here) run.documentId = here.id;
    }
    // A run over a set finds each of its books by hash; the run's view says which are missing (SetBooks).
    if (run.books) {
      run.books = await relinkBooks(store, run.books);
      run.documentId = run.books[0]!.documentId;
    }
    // Sources are traced again here where the book is: its sentences, by this browser's own reading of it.
    await store.importRun({ run, revisions, memories, followUps, sources });
    this.deps.publish({ type: 'status', runId: run.id, status: run.status });
    // A failure leaves the sources to be traced when the run is shown.
    await this.sources.trace(run.id, undefined, { again: (await this.hasBook(run)) || sources.length === 0 }).catch(() => undefined);
    return run.id;
  }

  /** Whether every book of a run is stored here. */
  private async hasBook(run: RunRecord): Promise<boolean> {
    const ids = run.books ? run.books.map((b) => b.documentId) : [run.documentId];
    return (await Promise.all(ids.map((id) => this.deps.store.getDocument(id)))).every((d) => d !== undefined);
  }

  /**
   * Traces the answers of a finished run whose sources are not stored (a run
   * from before sources were traced, or one whose tracing was cut short).
   */
  findSources(runId: string): Promise<void> {
    return this.sources.trace(runId);
  }

  /** Where each note of revision `revision`'s memory came from; nothing is stored. */
  traceMemory(runId: string, revision: number): Promise<MemorySources> {
    return this.sources.traceMemory(runId, revision);
  }
}
