import { type Anchor, sourcePlace } from '../core/anchors';
import { bookHeader, bookRange, runAnchors } from '../core/book-set';
import type { Citation } from '../core/citations/citation';
import { Tracer } from '../core/citations/trace';
import type { MemorySources, RunEvent } from '../agent/protocol';
import type { Library } from '../library/library';
import type { RunRecord, SourcesRecord, Store } from '../storage/db';
import { RUN_ANSWER } from '../storage/schema';
import { mark } from '../jobs/marks';

export interface SourceFinderDeps {
  store: Store;
  library: Library;
  publish(event: RunEvent): void;
}

/** An answer to trace: which answer of which run it is, the memory it was written from (as its SourcesRecord says), and its text. */
type AnswerText = Pick<SourcesRecord, 'runId' | 'answer' | 'memoryIndex'> & { text: string };

/** What tracing a run needs, read once: its memories, its text, and the places in it. */
interface Traced {
  tracer: Tracer;
  /** Revisions the tracer knows: a run that read on since is read again. */
  revisions: number;
  sections: boolean;
  place(citation: Citation): string;
}

/**
 * The sources of a run's answers, traced through its memory (core/citations)
 * once an answer is stored, and kept beside it; and, for the inspector, where
 * any note of any revision's memory came from. The book is read from storage
 * where it is here; without it, citations name the revisions that wrote the
 * facts down.
 */
export class SourceFinder {
  /** The run traced last: its memory pane asks again as the person moves through revisions. */
  private last: Promise<Traced> | undefined;
  private lastKey = '';
  /** Answers being traced, by run and answer. */
  private readonly pending = new Map<string, Promise<void>>();

  constructor(private readonly deps: SourceFinderDeps) {}

  /**
   * Traces and stores the sources of the given answers of a finished run
   * (RUN_ANSWER: its own; n: follow-up answer n), all of them by default, and
   * tells every tab. Answers whose sources are stored already are traced
   * again only with `again`.
   */
  async trace(runId: string, answers?: readonly number[], options: { again?: boolean } = {}): Promise<void> {
    const { store } = this.deps;
    const run = await store.getRun(runId);
    if (!run || run.status !== 'done') return;
    mark('sources-reading', true);
    const traced = await this.open(run);
    mark('sources-read');
    const followUps = await store.listFollowUps(runId);
    const known = options.again ? new Set<number>() : new Set((await store.listSources(runId)).map((s) => s.answer));
    const wanted = answers ?? [RUN_ANSWER, ...followUps.map((f) => f.index)];
    for (const answer of wanted) {
      if (known.has(answer)) continue;
      const followUp = answer === RUN_ANSWER ? undefined : followUps.find((f) => f.index === answer);
      if (answer !== RUN_ANSWER && !followUp) continue;
      // An answer being traced already (the page asked while the worker was at it) is waited for, not traced twice.
      const key = `${runId}:${answer}`;
      let work = this.pending.get(key);
      if (!work) {
        const text = followUp ? followUp.answer || followUp.reply : (run.answer ?? '') || (run.reply ?? '');
        work = this.traceAnswer(traced, { runId, answer, text, memoryIndex: followUp ? followUp.memoryIndex : traced.revisions - 1 });
        this.pending.set(key, work);
        // The caller sees the failure through `work`; this branch only forgets it.
        void work.catch(() => undefined).finally(() => this.pending.delete(key));
      }
      await work;
    }
  }

  private async traceAnswer(traced: Traced, { runId, answer, text, memoryIndex }: AnswerText): Promise<void> {
    mark('sources-tracing');
    const sources = await traced.tracer.citeAnswer(text, memoryIndex);
    mark('sources-traced');
    const record: SourcesRecord = {
      runId,
      answer,
      memoryIndex,
      citations: sources.citations.map((c) => ({ ...c, place: traced.place(c) })),
      unsourced: sources.unsourced,
      sections: traced.sections,
      tracedAt: Date.now(),
    };
    if (await this.deps.store.putSources(record)) this.deps.publish({ type: 'sources', runId, answer });
  }

  /** Where each note of revision `revision`'s memory came from. */
  async traceMemory(runId: string, revision: number): Promise<MemorySources> {
    const run = await this.deps.store.getRun(runId);
    if (!run) return { notes: [], sections: false };
    const traced = await this.open(run);
    if (revision < 0 || revision >= traced.revisions) return { notes: [], sections: false };
    return {
      sections: traced.sections,
      notes: (await traced.tracer.traceMemory(revision)).map((t) => ({
        text: t.note.text,
        start: t.note.start,
        end: t.note.end,
        citations: t.citations.map((c) => ({ ...c, place: traced.place(c) })),
      })),
    };
  }

  /** Forgets what was read for a run (it was deleted, or its book arrived). */
  forget(runId: string): void {
    if (this.lastKey.startsWith(`${runId}:`)) {
      this.last = undefined;
      this.lastKey = '';
    }
  }

  private open(run: RunRecord): Promise<Traced> {
    const runId = run.id;
    // The same run with the same revisions and book as last time: what was read then still holds.
    const key = `${runId}:${run.nextChunk}:${run.documentId}:${run.books?.map((b) => b.documentId).join('|') ?? ''}`;
    // Without its book, a run is read again each time: the book may have been added since.
    if (key !== this.lastKey || !this.last) {
      this.lastKey = key;
      const reading = this.read(run);
      this.last = reading;
      void reading.then(
        (t) => {
          if (!t.sections && this.last === reading) this.lastKey = '';
        },
        () => {
          if (this.last === reading) this.lastKey = '';
        },
      );
    }
    return this.last;
  }

  private async read(run: RunRecord): Promise<Traced> {
    const { store } = this.deps;
    const ids = run.books ? run.books.map((b) => b.documentId) : [run.documentId];
    const [revisions, memories, docs, anchors] = await Promise.all([
      store.listRevisions(run.id),
      store.listMemories(run.id),
      Promise.all(ids.map((id) => store.getDocument(id))),
      runAnchors(run, (id) => store.getAnchors(id)).catch((): Anchor[] => []),
    ]);
    // Only the sections tracing looks at are read from storage: a book of any size costs a few chunks.
    const rangeText = async (start: number, end: number) => {
      if (!run.books) return docs[0] ? await store.readText(run.documentId, start, end) : undefined;
      // In a set, the range's book: its header line, then characters of its own text.
      const at = bookRange(run.books, start, end);
      const book = run.books[at.book]!;
      const text = docs[at.book] ? await store.readText(book.documentId, at.from, at.to) : undefined;
      return text === undefined ? undefined : bookHeader(at.book, book.title).slice(at.headerFrom, at.headerTo) + text;
    };
    const section = async (r: number) => {
      const rev = revisions[r];
      if (!rev) return undefined;
      const text = await rangeText(rev.start, rev.end);
      if (text === undefined) return undefined;
      // An InfMem step read the passages it retrieved with its chunk: a fact may come from one of them.
      const passages = [];
      for (const p of rev.plan?.retrieved ?? []) {
        const passage = await rangeText(p.start, p.end);
        if (passage !== undefined) passages.push({ text: passage, start: p.start });
      }
      return { text, start: rev.start, ...(passages.length && { passages }) };
    };
    return {
      tracer: new Tracer({ question: run.question, memories, section }),
      revisions: revisions.length,
      sections: docs.every((d) => d !== undefined),
      place: (c) => sourcePlace(anchors, c.sentence?.start, revisions[c.revision] ?? { start: 0, end: 0 }),
    };
  }
}
