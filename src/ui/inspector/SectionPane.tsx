import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { bookHeader, bookName, bookRange } from '../../core/book-set';
import { joinHardWraps } from '../../core/prose-lines';
import type { Span } from '../../core/text';
import { type DocumentRecord, type RevisionRecord, type RunBook, store } from '../data';
import { ChunkPlace } from '../ChunkPlace';
import { i18n } from '../i18n';
import { useDrawnOn } from './useMarks';

/** A cited sentence marked in the section pane: its revision, its characters in the run's text, and a count that moves focus to it each time a source is opened. */
export interface CitedMark {
  revision: number;
  start: number;
  end: number;
  focus: number;
}

/** A chunk of the run's text: its index and its characters (a revision's, or a chunk InfMem never read). */
export type Chunk = Pick<RevisionRecord, 'index' | 'start' | 'end'>;

/** A run over a set: where each book lies in the set, and each as stored here (null where this browser lacks it). */
export interface SectionSet {
  books: readonly RunBook[];
  docs: readonly (DocumentRecord | null)[];
}

interface Props {
  runId: string;
  /** The chunk whose section is shown; undefined before the run has one. */
  chunk: Chunk | undefined;
  total: number;
  /** The run's book as stored here, or null when this browser doesn't have it (an imported run). */
  book: DocumentRecord | null;
  set?: SectionSet | undefined;
  /** A cited sentence (or passage) of this chunk's section, to mark (and focus) there. */
  cited: CitedMark | null;
  /** The memory written from this chunk, whose sentences are marked where it drew on them; null for none. */
  memory: { index: number; after: string } | null;
  /** A chunk InfMem never read: its heading says so, as it is no revision's. */
  neverRead?: boolean;
}

/** Where a chunk's section is stored: which book, which characters of it, and the header line the set put before them. */
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

function sourceOf(revision: Chunk, book: DocumentRecord | null, set: SectionSet | undefined): Source {
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

/** The section of a chunk, as far as storage has it: its text, or why there is none. */
interface Section {
  key: string;
  runId: string;
  revision: Chunk;
  text?: string;
  problem?: string;
}

/**
 * The section pane: a chunk's text as storage has it, with the sentences the
 * memory drew on and the cited one marked. Its heading names the chunk whose
 * text it holds: while the next one is read from storage it keeps what it
 * showed, marked busy.
 */
export function SectionPane({ runId, chunk, total, book: runBook, set, cited, memory, neverRead = false }: Props) {
  const { t } = useTranslation();
  const [read, setRead] = useState<Section | null>(null);
  // In a set, the book the chunk lies in; the one book otherwise.
  const source = chunk ? sourceOf(chunk, runBook, set) : null;
  const book = source?.doc ?? null;
  const { from = 0, to = 0, header = '' } = source ?? {};
  const sectionKey = book ? `${book.id}:${book.importing ? 'importing' : 'stored'}:${from}:${to}:${header}` : '';

  // Only the section shown is read from storage: a book of any size costs one chunk here.
  useEffect(() => {
    if (!sectionKey || !chunk || !book) return;
    let alive = true;
    void (async () => {
      let section: Section;
      try {
        const text = await (await store).readText(book.id, from, to);
        section =
          text === undefined
            ? { key: sectionKey, runId, revision: chunk, problem: i18n.t('inspector.stillStoring') }
            : { key: sectionKey, runId, revision: chunk, text: header + text };
      } catch (e) {
        section = { key: sectionKey, runId, revision: chunk, problem: (e as Error).message };
      }
      if (alive) setRead(section);
    })();
    return () => {
      alive = false;
    };
    // The run as well as the key: two runs over the same book read the same sections, and the one shown must be this run's.
  }, [sectionKey, runId, chunk, book, from, to, header]);

  const shown = chunk && book && read?.runId === runId ? read : null;
  const sectionBusy = !!chunk && !!book && shown?.key !== sectionKey;
  // Sentences are marked only with the memory written from the section shown.
  const marking = shown && memory?.index === shown.revision.index ? memory.after : null;
  const heading = (n: number) => t(neverRead ? 'infmem.sectionNeverRead' : 'inspector.sectionOf', { n, total });

  return (
    <section aria-label={t('inspector.section')} aria-busy={sectionBusy} className="pane">
      <h3>
        {/* Without the book there is nothing to read: the selected chunk's number stands with the reason. */}
        {shown ? heading(shown.revision.index + 1) : chunk && !book ? heading(chunk.index + 1) : t('inspector.section')}
        {shown && <ChunkPlace runId={runId} start={shown.revision.start} end={shown.revision.end} />}
      </h3>
      {shown?.text === undefined && !book && !source?.loading && chunk && cited?.revision === chunk.index ? (
        <MissingPassage text={set ? t('inspector.citedNoBookOf', { name: source?.name ?? '' }) : t('inspector.citedNoBook')} focus={cited.focus} />
      ) : shown?.text === undefined ? (
        <p className="hint">
          {!chunk
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
