import { type KeyboardEvent, useId, useMemo } from 'react';
import { describePlace } from '../../core/anchors';
import { bookAt, bookName } from '../../core/book-set';
import { useTranslation } from 'react-i18next';
import type { DocumentRecord, RevisionRecord, RunRecord } from '../data';
import { useRunAnchors } from '../ChunkPlace';
import { Compare } from './Compare';
import { ExportButtons } from './ExportButtons';
import { MemoryChart } from './MemoryChart';
import { type CitedMark, RevisionDetail } from './RevisionDetail';
import { Timeline } from './Timeline';
import { InfmemStep, InfmemStop } from './InfmemStep';
import { neverReadChunk } from './infmem-plan';
import { NeverReadChunk } from './NeverReadChunk';
import { useMonoMemory } from './useMonoMemory';
import { useMemorySearch } from './useMemorySearch';
import type { SourceTarget } from '../Sources';

interface Props {
  run: RunRecord;
  runs: readonly RunRecord[];
  revisions: readonly RevisionRecord[];
  book: DocumentRecord | null;
  /** A run over a set: each of its books as stored here, in reading order (null where this browser lacks it). */
  books: readonly (DocumentRecord | null)[];
  /** Selected chunk index, or null to follow the newest revision. */
  selected: number | null;
  onSelect(index: number): void;
  cited: CitedMark | null;
  onOpenSource(target: SourceTarget): void;
}

/** Read what the agent kept, chunk by chunk. */
export function Inspector({ run, runs, revisions, book, books, selected, onSelect, cited, onOpenSource }: Props) {
  const { t } = useTranslation();
  const ids = { search: useId(), slider: useId() };
  const anchors = useRunAnchors(run.id);
  const total = run.chunking ? Math.max(run.chunking.estimate, run.chunks.length) : run.chunks.length;
  const shown = selected !== null && selected < revisions.length ? selected : revisions.length ? revisions.length - 1 : null;
  // A chunk a finished InfMem read never read, opened from a passage retrieved from it: its section, not a revision.
  const neverRead = neverReadChunk(run, selected);
  const [monoMemory, setMonoMemory] = useMonoMemory();
  const { query, setQuery: onSearch, marked } = useMemorySearch(run.id, revisions.length);

  const firstHit = marked.size ? Math.min(...marked) : null;
  // In a set, where the first match was written says which book it came from.
  const firstPlace = run.books && firstHit !== null && revisions[firstHit] ? describePlace(anchors, revisions[firstHit].start) : '';
  // Where each book begins to be read: the revisions at which the book read changes.
  const bookStarts = useMemo(() => {
    const spans = run.books;
    if (!spans) return [];
    const starts: { index: number; title: string }[] = [];
    let last = -1;
    for (const r of revisions) {
      const b = bookAt(spans, r.start);
      if (b !== last) starts.push({ index: r.index, title: bookName(spans[b]!) });
      last = b;
    }
    return starts;
  }, [run.books, revisions]);
  const onSearchKey = (e: KeyboardEvent) => {
    if (e.key === 'Enter' && firstHit !== null) {
      e.preventDefault();
      onSelect(firstHit);
    }
  };

  return (
    <div className={monoMemory ? 'inspector mono-memory' : 'inspector'}>
      <div className="inspector-bar">
        <div className="field inline">
          <label htmlFor={ids.search}>{t('inspector.search')}</label>
          <input id={ids.search} type="search" value={query} onChange={(e) => onSearch(e.target.value)} onKeyDown={onSearchKey} />
        </div>
        <p className="hint" aria-live="polite">
          {query.trim()
            ? firstHit === null
              ? t('inspector.noMatch')
              : firstPlace
                ? t('sets.matchesIn', { count: marked.size, first: firstHit + 1, place: firstPlace })
                : t('inspector.matches', { count: marked.size, first: firstHit + 1 })
            : ''}
        </p>
        {firstHit !== null && (
          <button type="button" onClick={() => onSelect(firstHit)}>
            {t('inspector.firstMatch')}
          </button>
        )}
        <label className="check">
          <input type="checkbox" checked={monoMemory} onChange={(e) => setMonoMemory(e.target.checked)} />
          {t('inspector.monospace')}
        </label>
        <ExportButtons run={run} />
      </div>
      {/* Beside the run's controls, not under its thousands of revisions: another run is chosen before the chunks are stepped through. */}
      <Compare run={run} others={runs} index={shown} at={shown === null ? undefined : revisions[shown]} />
      {revisions.length > 0 && (
        <div className="field inline">
          <label htmlFor={ids.slider}>{t('inspector.revision')}</label>
          <input
            id={ids.slider}
            type="range"
            min={1}
            max={revisions.length}
            value={(shown ?? 0) + 1}
            aria-valuetext={t('inspector.revisionOf', { n: (shown ?? 0) + 1, total: revisions.length })}
            onChange={(e) => onSelect(e.target.valueAsNumber - 1)}
          />
        </div>
      )}
      <MemoryChart revisions={revisions} memoryCap={run.settings.memoryTokens} selected={shown} onSelect={onSelect} bookStarts={bookStarts} />
      <InfmemStop run={run} total={total} />
      <div className="revisions">
        <Timeline
          revisions={revisions}
          total={total}
          bookLength={run.books ? (run.books.at(-1)?.end ?? 0) : (book?.chars ?? 0)}
          anchors={anchors}
          reasons={run.chunks.map((c) => c.reason)}
          earlyStop={run.method?.earlyStop}
          selected={neverRead ? null : shown}
          marked={marked}
          onSelect={onSelect}
        />
        {neverRead ? (
          <NeverReadChunk
            run={run}
            chunk={neverRead}
            revisions={revisions}
            total={total}
            book={book}
            set={run.books ? { books: run.books, docs: books } : undefined}
            cited={cited && cited.revision === neverRead.index ? cited : null}
            onSelect={onSelect}
          />
        ) : (
          <RevisionDetail
            runId={run.id}
            revision={shown === null ? undefined : revisions[shown]}
            total={total}
            book={book}
            set={run.books ? { books: run.books, docs: books } : undefined}
            cited={cited && cited.revision === shown ? cited : null}
            onOpenSource={onOpenSource}
            search={query.trim()}
          />
        )}
      </div>
      {!neverRead && shown !== null && revisions[shown]?.plan && (
        <InfmemStep
          run={run}
          revision={revisions[shown]}
          read={revisions.length}
          stoppedAt={run.status === 'done' ? run.infmem?.stopped?.index : undefined}
          anchors={anchors}
          onOpenSource={onOpenSource}
          cited={cited && cited.revision === shown ? cited : null}
        />
      )}
    </div>
  );
}
