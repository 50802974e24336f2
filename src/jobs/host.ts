import { isAbortError } from '../core/generation';
import { DeviceLostError } from '../engines/errors';
import type { Engine, EngineConfig } from '../engines/engine';
import { StaleRunError, StorageError, StorageFullError } from '../storage/db';
import type { JobStatus } from '../storage/schema';
import type { EngineCache } from './engines';
import { RequestError } from './request-error';

/**
 * What one kind of job (a run, an evaluation sweep) tells the host: where its
 * status is kept, how every tab hears of it, and how it reads on. The rest of
 * its life (the lock, stopping, resuming, hand-over to another tab, and what a
 * failure does to it) is the host's, and the same for every kind.
 */
export interface JobKind {
  /** The name of the job's Web Lock: one tab writes a job at a time. */
  lockName(id: string): string;
  /** Its stored status; undefined once it is no longer stored. */
  status(id: string): Promise<JobStatus | undefined>;
  setStatus(id: string, status: JobStatus, error?: string): Promise<unknown>;
  /** Tells every tab the job's status. */
  announce(id: string, status: JobStatus, error?: string): void;
  /** Asks the other tabs' readers of the job to stop. */
  control(id: string, action: 'pause' | 'cancel'): void;
  /**
   * Reads the job on from its stored position until it is done or `job.signal`
   * stops it, storing each step before telling anyone. Failures are thrown:
   * the host decides what they do to the job.
   */
  read(id: string, job: JobContext): Promise<void>;
  /** How the host's messages name the job and where it continues from: "run", "its last saved revision". */
  words: { noun: string; continuesFrom: string };
}

/** What the host gives a job while it reads. */
export interface JobContext {
  readonly signal: AbortSignal;
  /** An engine from the worker's cache; if its GPU device is lost, the host reloads it and the job reads on. */
  engine(engineId: string, config?: EngineConfig): Promise<Engine>;
  /** GPU losses recovered since the job last stored a step. */
  readonly recoveries: number;
  /** The job stored a step: losses are counted from zero again. */
  stored(): void;
}

export interface JobHostDeps {
  engines: EngineCache;
  /** Runs `work` holding the job's lock, waiting for it while another tab holds it. */
  withLock?(name: string, work: () => Promise<void>): Promise<void>;
}

/** GPU losses in a row after which a job is paused rather than reloaded again. */
const MAX_RECOVERIES = 3;

/**
 * The life of every job in this worker: one reader per job under its Web
 * Lock, pause and cancel (here or from another tab), resume from storage, a
 * standby that carries on when the writing tab closes, and one policy for
 * what stops a job: a pause or cancel, a writer that lost a race, a lost GPU,
 * a full disk or a closed database.
 */
export class JobHost {
  private readonly active = new Map<string, { controller: AbortController; done: Promise<void> }>();
  /** GPU losses in a row per job, reset by each stored step. */
  private readonly recoveries = new Map<string, number>();

  constructor(
    private readonly kind: JobKind,
    private readonly deps: JobHostDeps,
  ) {}

  /**
   * Reads a job to its end, holding its lock. A job that is stopping finishes
   * its current step before the next reader starts.
   */
  execute(id: string): Promise<void> {
    const current = this.active.get(id);
    if (current && !current.controller.signal.aborted) return current.done;
    const controller = new AbortController();
    const work = async () => {
      while (await this.pass(id, controller.signal)); // true: the engine recovered from a device loss, so read on
    };
    const { withLock } = this.deps;
    const done = (current?.done ?? Promise.resolve())
      .then(() => (withLock ? withLock(this.kind.lockName(id), work) : work()))
      .finally(() => {
        if (this.active.get(id)?.controller === controller) this.active.delete(id);
      });
    this.active.set(id, { controller, done });
    return done;
  }

  /** A job just stored as running: every tab hears of it, and this tab reads it. */
  begin(id: string): void {
    this.kind.announce(id, 'running');
    void this.execute(id);
  }

  /** Continues a paused, cancelled, failed or interrupted job from where storage says (its next chunk, its next sample). */
  async resume(id: string): Promise<void> {
    const status = await this.kind.status(id);
    if (status === undefined) throw new RequestError(`That ${this.kind.words.noun} is no longer stored.`);
    if (status === 'done') return;
    if (status !== 'running') await this.kind.setStatus(id, 'running');
    // Told even when storage already said running (a pause whose write did not fit): every tab shows it going again.
    this.begin(id);
  }

  pause(id: string): Promise<void> {
    return this.stop(id, 'paused');
  }

  cancel(id: string): Promise<void> {
    return this.stop(id, 'cancelled');
  }

  /** Stops this tab's reader of the job, if there is one: a stop asked in another tab, or a deletion. */
  abort(id: string): void {
    this.active.get(id)?.controller.abort();
  }

  /**
   * Another tab started reading the job: a standby here waits for its lock,
   * and if that tab closes or crashes, carries on from the next step.
   */
  standBy(id: string): void {
    if (this.deps.withLock) void this.execute(id);
  }

  /** Resolves once the job's current reader here has stopped (at once if there is none). */
  async settled(id: string): Promise<void> {
    await this.active.get(id)?.done;
  }

  private async stop(id: string, status: 'paused' | 'cancelled'): Promise<void> {
    const current = await this.kind.status(id);
    if (current === undefined || current === 'done') return;
    await this.kind.setStatus(id, status);
    this.abort(id);
    this.kind.control(id, status === 'paused' ? 'pause' : 'cancel');
    this.kind.announce(id, status);
  }

  /** One reading of the job under its lock; true when it should read on at once (its engine recovered). */
  private async pass(id: string, signal: AbortSignal): Promise<boolean> {
    // Read after the lock is held: another writer may have moved the job on.
    if ((await this.kind.status(id)) !== 'running' || signal.aborted) return false;
    let engine: Engine | undefined;
    const recoveries = this.recoveries;
    const job: JobContext = {
      signal,
      engine: async (engineId, config) => (engine = await this.deps.engines.open(engineId, config)),
      get recoveries() {
        return recoveries.get(id) ?? 0;
      },
      stored: () => recoveries.delete(id),
    };
    try {
      await this.kind.read(id, job);
      return false;
    } catch (e) {
      return this.failed(id, e, signal, engine);
    }
  }

  /** What a failure does to the job: nothing (it was stopped on purpose), a reload of its engine, a pause, or the end. */
  private async failed(id: string, e: unknown, signal: AbortSignal, engine: Engine | undefined): Promise<boolean> {
    const { kind } = this;
    const { noun, continuesFrom } = kind.words;
    if (isAbortError(e) || signal.aborted) return false; // pause or cancel already recorded the status
    if (e instanceof StaleRunError) return false; // another writer owns this job
    if (e instanceof DeviceLostError) {
      const attempt = (this.recoveries.get(id) ?? 0) + 1;
      if (engine?.recover && attempt <= MAX_RECOVERIES) {
        this.recoveries.set(id, attempt);
        // A recovery that fails shows in the retried step, which fails again and counts as the next attempt.
        await engine.recover(attempt).catch(() => undefined);
        return true;
      }
      this.recoveries.delete(id);
      const message = `${e.message} The GPU was lost ${attempt} times in a row, so the ${noun} is paused; press Resume to try again.`;
      // A write that fails still leaves the event below to tell every tab; a reload resumes and asks again.
      await kind.setStatus(id, 'paused', message).catch(() => undefined);
      kind.announce(id, 'paused', message);
      return false;
    }
    if (e instanceof StorageFullError) {
      // The failed step rolled back whole; the job waits for room instead of failing.
      const message = `${e.message} Then press Resume: everything read so far is kept.`;
      // This write may not fit either; the event still tells every tab, and a reload resumes and asks again.
      await kind.setStatus(id, 'paused', message).catch(() => undefined);
      kind.announce(id, 'paused', message);
      return false;
    }
    if (e instanceof StorageError && (e.kind === 'closed' || e.kind === 'newer-version')) {
      // Nothing more can be stored from this tab; storage still says running, so the reload resumes.
      kind.announce(id, 'paused', `${e.message} The ${noun} then continues from ${continuesFrom}.`);
      return false;
    }
    const message = e instanceof Error ? e.message : String(e);
    // A write that fails still leaves the event below to tell every tab; a reload resumes and fails again.
    await kind.setStatus(id, 'failed', message).catch(() => undefined);
    kind.announce(id, 'failed', message);
    return false;
  }
}
