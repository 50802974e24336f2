import { abortable } from './abort';
import { abortError, type ChatMessage, type GenerateOptions, type GenerateResult, type TextGenerator } from './generation';

/** One question's request in a step that writes several questions' memories at once. */
export interface BatchRequest {
  messages: readonly ChatMessage[];
  options: GenerateOptions;
}

/**
 * Writes several requests together and settles each on its own: a request
 * that fails (a bad reply, a server error after its retries, its own stop)
 * fails alone and the others are written.
 */
export type BatchSender = (requests: readonly BatchRequest[]) => Promise<PromiseSettledResult<GenerateResult>[]>;

/** A sender for a generator that writes one request at a time: the requests take turns, in order (correct, not faster). */
export function inTurns(generator: TextGenerator): BatchSender {
  return async (requests) => {
    const out: PromiseSettledResult<GenerateResult>[] = [];
    for (const r of requests) {
      try {
        out.push({ status: 'fulfilled', value: await generator.generate(r.messages, r.options) });
      } catch (reason) {
        out.push({ status: 'rejected', reason });
      }
    }
    return out;
  };
}

/** A sender for a server that batches requests itself: all in flight together, at most `limit` at once. */
export function inFlight(generator: TextGenerator, limit = Infinity): BatchSender {
  return (requests) => {
    const bounded = limitInFlight(generator, limit);
    return Promise.allSettled(requests.map((r) => bounded.generate(r.messages, r.options)));
  };
}

/**
 * The generator with at most `limit` of its calls running at once: the others
 * wait their turn, in the order they came, and one stopped while it waits
 * leaves the line. A call holds its turn through its own retries (they happen
 * inside `generate`), so a server that is failing is not sent more meanwhile.
 */
export function limitInFlight(generator: TextGenerator, limit = Infinity): TextGenerator {
  // Fewer than one (or no number) would let nothing through.
  const most = limit >= 1 ? limit : 1;
  let running = 0;
  const line: (() => void)[] = [];
  // A turn ending passes straight to the next in line: a call arriving meanwhile cannot take it first.
  const release = () => {
    const next = line.shift();
    if (next) next();
    else running--;
  };
  const turn = (signal: AbortSignal | undefined): Promise<void> => {
    if (running < most) {
      running++;
      return Promise.resolve();
    }
    return abortable<void>(signal, (resolve) => {
      line.push(resolve);
      return () => {
        const at = line.indexOf(resolve);
        if (at >= 0) line.splice(at, 1);
      };
    });
  };
  return {
    generate: async (messages, options) => {
      await turn(options.signal);
      try {
        return await generator.generate(messages, options);
      } finally {
        release();
      }
    },
  };
}

interface Pending {
  member: object;
  /** Batches sent before this request was asked for. */
  askedAt: number;
  request: BatchRequest;
  resolve(result: GenerateResult): void;
  reject(error: unknown): void;
}

/** One question of a batched read: its generator, and its leaving once it has answered, failed or stopped. */
export interface BatchMember extends TextGenerator {
  leave(): void;
}

/**
 * The questions of one read step together. Each question's loop asks its
 * member for a step; the batch is sent once every member still reading has
 * asked, so all the memories move on chunk by chunk together. More questions
 * than a batch holds (`limit`) are written in groups, each group once the
 * previous one is written, not waiting for the questions already served this
 * step. One batch is written at a time. A member that leaves (done, failed, paused) no longer
 * holds the others up; one that stops while it waits leaves the batch at once.
 */
export class StepBatcher {
  /** Each member, with the most requests a batch may hold while it is in it (its read's own batch size). */
  private readonly members = new Map<object, number>();
  /** Members whose request is being written. */
  private readonly busy = new Set<object>();
  /** The number of the batch that last wrote each member's request (batches are numbered from 1). */
  private readonly served = new Map<object, number>();
  private sent = 0;
  private writing = false;
  private readonly pending: Pending[] = [];

  constructor(
    private readonly send: BatchSender,
    /** The most requests written together (the engine's batch size). */
    private readonly limit: number = Infinity,
  ) {}

  /** Requests waiting for the batch to fill. */
  get waiting(): number {
    return this.pending.length;
  }

  /**
   * A new member: a question's loop generates through it. `limit` is the
   * batch size of its read (sized at its own context): while it is in, no
   * batch holds more, whatever size the batch was made with.
   */
  join(limit: number = Infinity): BatchMember {
    const self = {};
    this.members.set(self, limit >= 1 ? limit : 1);
    return {
      generate: (messages, options) => this.ask(self, { messages, options }),
      leave: () => {
        this.served.delete(self);
        if (this.members.delete(self)) this.flush();
      },
    };
  }

  private ask(self: object, request: BatchRequest): Promise<GenerateResult> {
    if (!this.members.has(self)) return Promise.reject(new Error('This question has left its read.'));
    return abortable<GenerateResult>(request.options.signal, (resolve, reject) => {
      const entry: Pending = { member: self, askedAt: this.sent, request, resolve, reject };
      this.pending.push(entry);
      queueMicrotask(() => this.flush());
      return () => {
        const at = this.pending.indexOf(entry);
        if (at >= 0) this.pending.splice(at, 1);
        this.flush();
      };
    });
  }

  /**
   * Sends the next batch where the engine is free and a full batch has asked,
   * or every member has: asked, being written, or served since the oldest
   * request asked (ahead of it, in the group before).
   */
  private flush(): void {
    if (this.writing || this.pending.length === 0) return;
    const oldest = this.pending[0]!.askedAt;
    const asking = new Set(this.pending.map((p) => p.member));
    const waitedFor = [...this.members.keys()].some((m) => !asking.has(m) && !this.busy.has(m) && (this.served.get(m) ?? -1) <= oldest);
    const limit = Math.min(this.limit, ...this.members.values());
    if (waitedFor && this.pending.length < limit) return;
    const batch = this.pending.splice(0, Math.min(limit, this.pending.length));
    this.writing = true;
    const number = ++this.sent;
    for (const p of batch) {
      this.busy.add(p.member);
      this.served.set(p.member, number);
    }
    void this.send(batch.map((p) => p.request))
      .then(
        (results) => {
          batch.forEach((p, i) => {
            const r = results[i];
            if (!r) p.reject(new Error('The engine gave no reply to this request.'));
            else if (r.status === 'fulfilled') p.resolve(r.value);
            else p.reject(r.reason);
          });
        },
        (error: unknown) => {
          for (const p of batch) p.reject(p.request.options.signal?.aborted ? abortError() : error);
        },
      )
      .finally(() => {
        this.writing = false;
        for (const p of batch) this.busy.delete(p.member);
        this.flush();
      });
  }
}
