import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { INITIAL_MEMORY, isEmptyStart } from '../../core/prompts';
import { type DocumentRecord, type RevisionRecord, store } from '../data';
import { useMemoryDiff } from './useMarks';
import { MemorySources } from './MemorySources';
import { useFirstChange } from './useFirstChange';
import { Matched } from './Matched';
import { type CitedMark, SectionPane, type SectionSet } from './SectionPane';
import type { SourceTarget } from '../Sources';

export type { CitedMark } from './SectionPane';

interface Props {
  runId: string;
  revision: RevisionRecord | undefined;
  total: number;
  /** The run's book as stored here, or null when this browser doesn't have it (an imported run). */
  book: DocumentRecord | null;
  /** A run over a set: where each book lies in the set, and each as stored here (null where this browser lacks it). */
  set?: SectionSet;
  /** A cited sentence of this revision's section, to mark (and focus) there. */
  cited: CitedMark | null;
  onOpenSource(target: SourceTarget): void;
  /** What "Search memories" holds: marked where the memory shown contains it. */
  search?: string;
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
  const key = revision ? `${runId}:${revision.index}` : '';

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
      <SectionPane
        runId={runId}
        chunk={revision}
        total={total}
        book={runBook}
        set={set}
        cited={cited}
        memory={ready && { index: ready.revision.index, after: ready.after }}
      />
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
