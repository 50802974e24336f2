import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { bookHeader, bookName, bookRange } from '../../core/book-set';
import { INITIAL_MEMORY, isEmptyStart } from '../../core/prompts';
import { joinHardWraps } from '../../core/prose-lines';
import type { Span } from '../../core/text';
import { type DocumentRecord, type RevisionRecord, type RunBook, store } from '../data';
import { ChunkPlace } from '../ChunkPlace';
import { i18n } from '../i18n';
import { useDrawnOn, useMemoryDiff } from './useMarks';
import { MemorySources } from './MemorySources';
import { useFirstChange } from './useFirstChange';
import { Matched } from './Matched';
import type { SourceTarget } from '../Sources';

/** A cited sentence marked in the section pane: its revision, its characters in the run's text, and a count that moves focus to it each time a source is opened. */
export interface CitedMark {
  revision: number;
  start: number;
  end: number;
  focus: number;
}

interface Props {
  runId: string;
  revision: RevisionRecord | undefined;
  total: number;
  /** The run's book as stored here, or null when this browser doesn't have it (an imported run). */
  book: DocumentRecord | null;
  /** A run over a set: where each book lies in the set, and each as stored here (null where this browser lacks it). */
  set?: { books: readonly RunBook[]; docs: readonly (DocumentRecord | null)[] };
  /** A cited sentence of this revision's section, to mark (and focus) there. */
  cited: CitedMark | null;
  onOpenSource(target: SourceTarget): void;
  /** What "Search memories" holds: marked where the memory shown contains it. */
  search?: string;
}

/** Where a revision's section is stored: which book, which characters of it, and the header line the set put before them. */
interface Source {
  doc: DocumentRecord | null;
  /** The book's name (see bookName), to say which one is missing. */
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
  return {
    doc: set.docs[r.book] ?? null,
    loading,
    name: bookName(b),
    header: bookHeader(r.book, b.title).slice(r.headerFrom, r.headerTo),
    from: r.from,
    to: r.to,
  };
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
export function RevisionDetail({ runId, revision, total, book: runBook, set, cited, onOpenSource, search = '' }: Props) {
  const { t } = useTranslation();
  const [tracing, setTracing] = useState(false);
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
        ) : ready && isEmptyStart(ready.after) ? (
          <EmptyMemory />
        ) : (
          <pre tabIndex={0} className="text memory">
            {!revision ? t('inspector.noRevision') : ready ? <Matched text={ready.after} query={search} /> : '…'}
          </pre>
        )}
        {revision && (
          <div className="memory-sources">
            <button type="button" aria-expanded={tracing} onClick={() => setTracing(!tracing)}>
              {t('sources.memory')}
            </button>
            {tracing && <MemorySources runId={runId} revision={revision.index} total={total} onOpen={onOpenSource} />}
          </div>
        )}
      </section>
      <section aria-label={t('inspector.changes')} aria-busy={memoryBusy} className="pane">
        <h3>
          {t('inspector.changes')}
          {ready ? ` · ${t('inspector.words', { added: ready.revision.wordsAdded, removed: ready.revision.wordsRemoved })}` : ''}
        </h3>
        <pre tabIndex={0} className="text memory diff">
          {ready ? <DiffView before={isEmptyStart(ready.before) ? '' : ready.before} after={isEmptyStart(ready.after) ? '' : ready.after} /> : ''}
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
          {shown && <ChunkPlace runId={runId} start={shown.revision.start} end={shown.revision.end} />}
        </h3>
        {shown?.text === undefined && !book && !source?.loading && revision && cited?.revision === revision.index ? (
          <MissingPassage text={set ? t('inspector.citedNoBookOf', { name: source?.name ?? '' }) : t('inspector.citedNoBook')} focus={cited.focus} />
        ) : shown?.text === undefined ? (
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
            <Highlighted
              section={shown.text}
              memory={marking}
              cited={
                cited && shown.revision.index === cited.revision ? { start: cited.start - shown.revision.start, end: cited.end - shown.revision.start } : null
              }
              focus={cited?.focus ?? 0}
            />
          </pre>
        )}
      </section>
    </div>
  );
}

/** A memory that is still the read's empty start, said as such and not shown as memory text (the prompt still sends its words). */
export function EmptyMemory() {
  const { t } = useTranslation();
  return (
    <p className="hint empty-memory">
      <em>{t('readPage.emptyMemory')}</em>
    </p>
  );
}

function DiffView({ before, after }: { before: string; after: string }) {
  const diff = useMemoryDiff(before, after);
  const first = useFirstChange(diff);
  if (!diff) return <>{after}</>;
  const firstChange = diff.parts.findIndex((p) => p.kind !== 'same');
  return (
    <>
      {diff.parts.map((p, i) =>
        p.kind === 'added' ? (
          <ins key={i} ref={i === firstChange ? first : undefined}>
            {p.text}
          </ins>
        ) : p.kind === 'removed' ? (
          <del key={i} ref={i === firstChange ? first : undefined}>
            {p.text}
          </del>
        ) : (
          <span key={i}>{p.text}</span>
        ),
      )}
    </>
  );
}

/** A stretch of the section to mark: a sentence the memory drew on, or the sentence a source cites. */
interface Marked {
  start: number;
  end: number;
  cited: boolean;
}

/** The drawn-on sentences around the cited one: where they overlap, the cited sentence is marked as such. */
function marksOf(drawnOn: readonly Span[], cited: Span | null): Marked[] {
  const out: Marked[] = [];
  for (const s of drawnOn) {
    if (!cited || s.end <= cited.start || s.start >= cited.end) out.push({ ...s, cited: false });
    else {
      if (s.start < cited.start) out.push({ start: s.start, end: cited.start, cited: false });
      if (s.end > cited.end) out.push({ start: cited.end, end: s.end, cited: false });
    }
  }
  if (cited) out.push({ ...cited, cited: true });
  return out.sort((a, b) => a.start - b.start);
}

/**
 * Where a source was followed to a section whose book this browser does not have: said at once, and focused (and
 * scrolled to) as the cited sentence would be, so that following the link shows why there is no passage.
 */
function MissingPassage({ text, focus }: { text: string; focus: number }) {
  const ref = useRef<HTMLParagraphElement>(null);
  useLayoutEffect(() => {
    ref.current?.scrollIntoView({ block: 'nearest' });
    ref.current?.focus({ preventScroll: true });
  }, [focus]);
  return (
    <p ref={ref} tabIndex={-1} role="status" className="hint cited-missing">
      {text}
    </p>
  );
}

/**
 * The section with the sentences the new memory drew on marked, and the
 * sentence a source cites marked apart: said as such to screen readers, and
 * focused (and scrolled to) each time a source is opened.
 */
function Highlighted({ section, memory, cited, focus }: { section: string; memory: string | null; cited: Span | null; focus: number }) {
  const { t } = useTranslation();
  const spans = useDrawnOn(section, memory ?? '');
  // Shown as paragraphs; the same length, so the marks' offsets into the stored section hold.
  const prose = useMemo(() => joinHardWraps(section), [section]);
  const citedRef = useRef<HTMLElement>(null);
  const inside = cited && cited.start >= 0 && cited.end <= section.length && cited.start < cited.end ? cited : null;
  useLayoutEffect(() => {
    const mark = citedRef.current;
    if (!mark) return;
    mark.scrollIntoView({ block: 'nearest' });
    mark.focus({ preventScroll: true });
  }, [focus, inside?.start, inside?.end]);
  const out: React.ReactNode[] = [];
  let at = 0;
  marksOf(memory !== null ? (spans ?? []) : [], inside).forEach((m) => {
    out.push(prose.slice(at, m.start));
    out.push(
      m.cited ? (
        <mark key="cited" className="cited" tabIndex={-1} ref={citedRef}>
          <span className="visually-hidden">{t('sources.cited')} </span>
          {prose.slice(m.start, m.end)}
        </mark>
      ) : (
        <mark key={m.start} title={t('inspector.drewOn')}>
          {prose.slice(m.start, m.end)}
        </mark>
      ),
    );
    at = m.end;
  });
  out.push(prose.slice(at));
  return <>{out}</>;
}
