import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { bookHeader, bookRange } from '../../core/book-set';
import { INITIAL_MEMORY } from '../../core/prompts';
import { type DocumentRecord, type RevisionRecord, type RunBook, store } from '../data';
import { ChunkPlace } from '../ChunkPlace';
import { i18n } from '../i18n';
import { useDrawnOn, useMemoryDiff } from './useMarks';

interface Props {
  runId: string;
  revision: RevisionRecord | undefined;
  total: number;
  /** The run's book as stored here, or null when this browser doesn't have it (an imported run). */
  book: DocumentRecord | null;
  /** A run over a set: where each book lies in the set, and each as stored here (null where this browser lacks it). */
  set?: { books: readonly RunBook[]; docs: readonly (DocumentRecord | null)[] };
}

/** Where a revision's section is stored: which book, which characters of it, and the header line the set put before them. */
interface Source {
  doc: DocumentRecord | null;
  /** The book's file name, to say which one is missing. */
  name: string;
  header: string;
  from: number;
  to: number;
  /** The set's books are still being read from storage: whether this one is here is not known yet. */
  loading?: boolean;
}

function sourceOf(revision: RevisionRecord, book: DocumentRecord | null, set: Props['set']): Source {
  if (!set) return { doc: book, name: book?.name ?? '', header: '', from: revision.start, to: revision.end };
  const r = bookRange(set.books, revision.start, revision.end);
  const b = set.books[r.book]!;
  const loading = set.docs.length !== set.books.length;
  return { doc: set.docs[r.book] ?? null, loading, name: b.name, header: bookHeader(r.book, b.title).slice(r.headerFrom, r.headerTo), from: r.from, to: r.to };
}

/** A revision's memory and the one before it, as storage has them, or why they could not be read. */
interface Loaded {
  key: string;
  runId: string;
  revision: RevisionRecord;
  before: string;
  after: string;
  problem?: string;
}

/** The section a revision read, as far as storage has it: its text, or why there is none. */
interface Section {
  key: string;
  runId: string;
  revision: RevisionRecord;
  text?: string;
  problem?: string;
}

/**
 * The selected revision: its memory, what changed from the one before, and the
 * section it read. Each pane's heading names the revision whose text it shows:
 * while the next one is read from storage, a pane keeps what it showed (marked
 * busy) rather than naming a revision it cannot show yet.
 */
export function RevisionDetail({ runId, revision, total, book: runBook, set }: Props) {
  const { t } = useTranslation();
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [read, setRead] = useState<Section | null>(null);
  const key = revision ? `${runId}:${revision.index}` : '';
  // In a set, the book the revision read; the one book otherwise.
  const source = revision ? sourceOf(revision, runBook, set) : null;
  const book = source?.doc ?? null;
  const { from = 0, to = 0, header = '' } = source ?? {};
  const sectionKey = book ? `${book.id}:${book.importing ? 'importing' : 'stored'}:${from}:${to}:${header}` : '';

  // Only the section shown is read from storage: a book of any size costs one chunk here.
  useEffect(() => {
    if (!sectionKey || !revision || !book) return;
    let alive = true;
    void (async () => {
      let section: Section;
      try {
        const text = await (await store).readText(book.id, from, to);
        section =
          text === undefined
            ? { key: sectionKey, runId, revision, problem: i18n.t('inspector.stillStoring') }
            : { key: sectionKey, runId, revision, text: header + text };
      } catch (e) {
        section = { key: sectionKey, runId, revision, problem: (e as Error).message };
      }
      if (alive) setRead(section);
    })();
    return () => {
      alive = false;
    };
    // The run as well as the key: two runs over the same book read the same sections, and the one shown must be this run's.
  }, [sectionKey, runId, revision, book, from, to, header]);

  useEffect(() => {
    if (!revision) return;
    let alive = true;
    void (async () => {
      const memoryKey = `${runId}:${revision.index}`;
      let memories: Loaded;
      try {
        const s = await store;
        const [after, before] = await Promise.all([
          s.getMemory(runId, revision.index),
          revision.index > 0 ? s.getMemory(runId, revision.index - 1) : Promise.resolve(INITIAL_MEMORY),
        ]);
        memories = { key: memoryKey, runId, revision, before: before ?? '', after: after ?? '' };
      } catch (e) {
        memories = { key: memoryKey, runId, revision, before: '', after: '', problem: (e as Error).message };
      }
      if (alive) setLoaded(memories);
    })();
    return () => {
      alive = false;
    };
  }, [runId, revision]);

  // What each pane shows: the selected revision's once read, until then the one shown before (of this run).
  const memory = revision && loaded?.runId === runId ? loaded : null;
  const memoryBusy = !!revision && memory?.key !== key;
  const ready = memory && !memory.problem ? memory : null;
  const shown = revision && book && read?.runId === runId ? read : null;
  const sectionBusy = !!revision && !!book && shown?.key !== sectionKey;
  // Sentences are marked only with the memory written from the section shown.
  const marking = shown && ready?.revision.index === shown.revision.index ? ready.after : null;

  return (
    <div className="detail">
      <section aria-label={t('inspector.memory')} aria-busy={memoryBusy} className="pane">
        <h3>{memory ? t('inspector.memoryAfter', { n: memory.revision.index + 1 }) : t('inspector.memory')}</h3>
        {memory?.problem ? (
          <p className="hint">{memory.problem}</p>
        ) : (
          <pre tabIndex={0} className="text memory">
            {revision ? (ready?.after ?? '…') : t('inspector.noRevision')}
          </pre>
        )}
      </section>
      <section aria-label={t('inspector.changes')} aria-busy={memoryBusy} className="pane">
        <h3>
          {t('inspector.changes')}
          {ready ? ` · ${t('inspector.words', { added: ready.revision.wordsAdded, removed: ready.revision.wordsRemoved })}` : ''}
        </h3>
        <pre tabIndex={0} className="text memory diff">
          {ready ? <DiffView before={ready.before} after={ready.after} /> : ''}
        </pre>
      </section>
      <section aria-label={t('inspector.section')} aria-busy={sectionBusy} className="pane">
        <h3>
          {/* Without the book there is nothing to read: the selected revision's number stands with the reason. */}
          {shown
            ? t('inspector.sectionOf', { n: shown.revision.index + 1, total })
            : revision && !book
              ? t('inspector.sectionOf', { n: revision.index + 1, total })
              : t('inspector.section')}
          {shown && <ChunkPlace runId={runId} offset={shown.revision.start} />}
        </h3>
        {shown?.text === undefined ? (
          <p className="hint">
            {!revision
              ? ''
              : source?.loading
                ? '…'
                : !book
                  ? set
                    ? t('sets.noBookOf', { name: source?.name ?? '' })
                    : t('inspector.noBook')
                  : (shown?.problem ?? '…')}
          </p>
        ) : (
          <pre tabIndex={0} className="text">
            {marking !== null ? <Highlighted section={shown.text} memory={marking} /> : shown.text}
          </pre>
        )}
      </section>
    </div>
  );
}

function DiffView({ before, after }: { before: string; after: string }) {
  const diff = useMemoryDiff(before, after);
  if (!diff) return <>{after}</>;
  return (
    <>
      {diff.parts.map((p, i) =>
        p.kind === 'added' ? <ins key={i}>{p.text}</ins> : p.kind === 'removed' ? <del key={i}>{p.text}</del> : <span key={i}>{p.text}</span>,
      )}
    </>
  );
}

/** The section with the sentences the new memory drew on marked. */
function Highlighted({ section, memory }: { section: string; memory: string }) {
  const { t } = useTranslation();
  const spans = useDrawnOn(section, memory);
  if (!spans) return <>{section}</>;
  const out: React.ReactNode[] = [];
  let at = 0;
  spans.forEach((s, i) => {
    out.push(section.slice(at, s.start));
    out.push(
      <mark key={i} title={t('inspector.drewOn')}>
        {section.slice(s.start, s.end)}
      </mark>,
    );
    at = s.end;
  });
  out.push(section.slice(at));
  return <>{out}</>;
}
