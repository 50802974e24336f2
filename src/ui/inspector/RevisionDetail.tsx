import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { i18n } from '../i18n';
import { diffMemory } from '../../core/memory-diff';
import { INITIAL_MEMORY } from '../../core/prompts';
import { sentencesDrawnOn } from '../../core/provenance';
import type { DocumentRecord, RevisionRecord } from '../../storage/db';
import { ChunkPlace } from '../ChunkPlace';
import { store } from '../client';

interface Props {
  runId: string;
  revision: RevisionRecord | undefined;
  total: number;
  /** The run's book as stored here, or null when this browser doesn't have it (an imported run). */
  book: DocumentRecord | null;
}

interface Loaded {
  key: string;
  before: string;
  after: string;
}

/** The section a revision read, as far as storage has it: its text, or why there is none. */
interface Section {
  key: string;
  text?: string;
  problem?: string;
}

/** The selected revision: its memory, what changed from the one before, and the section it read. */
export function RevisionDetail({ runId, revision, total, book }: Props) {
  const { t } = useTranslation();
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [read, setRead] = useState<Section | null>(null);
  const key = revision ? `${runId}:${revision.index}` : '';
  const sectionKey = revision && book ? `${book.id}:${book.importing ? 'importing' : 'stored'}:${revision.start}:${revision.end}` : '';

  // Only the section shown is read from storage: a book of any size costs one chunk here.
  useEffect(() => {
    if (!sectionKey || !revision || !book) return;
    let alive = true;
    void (async () => {
      let section: Section;
      try {
        const text = await (await store).readText(book.id, revision.start, revision.end);
        section = text === undefined ? { key: sectionKey, problem: i18n.t('inspector.stillStoring') } : { key: sectionKey, text };
      } catch (e) {
        section = { key: sectionKey, problem: (e as Error).message };
      }
      if (alive) setRead(section);
    })();
    return () => {
      alive = false;
    };
    // The key names everything the read depends on.
  }, [sectionKey]);

  useEffect(() => {
    if (!revision) return;
    let alive = true;
    void (async () => {
      const s = await store;
      const [after, before] = await Promise.all([
        s.getMemory(runId, revision.index),
        revision.index > 0 ? s.getMemory(runId, revision.index - 1) : Promise.resolve(INITIAL_MEMORY),
      ]);
      if (alive) setLoaded({ key: `${runId}:${revision.index}`, before: before ?? '', after: after ?? '' });
    })();
    return () => {
      alive = false;
    };
  }, [runId, revision]);

  const ready = revision && loaded?.key === key ? loaded : null;
  const shownSection = read?.key === sectionKey ? read : null;
  const section = shownSection?.text ?? null;

  return (
    <div className="detail">
      <section aria-label={t('inspector.memory')} className="pane">
        <h3>{revision ? t('inspector.memoryAfter', { n: revision.index + 1 }) : t('inspector.memory')}</h3>
        <pre tabIndex={0} className="text">{revision ? (ready?.after ?? '…') : t('inspector.noRevision')}</pre>
      </section>
      <section aria-label={t('inspector.changes')} className="pane">
        <h3>
          {t('inspector.changes')}
          {revision ? ` · ${t('inspector.words', { added: revision.wordsAdded, removed: revision.wordsRemoved })}` : ''}
        </h3>
        <pre tabIndex={0} className="text diff">{ready ? <DiffView before={ready.before} after={ready.after} /> : ''}</pre>
      </section>
      <section aria-label={t('inspector.section')} className="pane">
        <h3>
          {revision ? t('inspector.sectionOf', { n: revision.index + 1, total }) : t('inspector.section')}
          {revision && <ChunkPlace runId={runId} offset={revision.start} />}
        </h3>
        {section === null ? (
          <p className="hint">
            {!revision ? '' : !book ? t('inspector.noBook') : (shownSection?.problem ?? '…')}
          </p>
        ) : (
          <pre tabIndex={0} className="text">{ready ? <Highlighted section={section} memory={ready.after} /> : section}</pre>
        )}
      </section>
    </div>
  );
}

function DiffView({ before, after }: { before: string; after: string }) {
  return (
    <>
      {diffMemory(before, after).parts.map((p, i) =>
        p.kind === 'added' ? (
          <ins key={i}>
            {p.text}
          </ins>
        ) : p.kind === 'removed' ? (
          <del key={i}>
            {p.text}
          </del>
        ) : (
          <span key={i}>{p.text}</span>
        ),
      )}
    </>
  );
}

/** The section with the sentences the new memory drew on marked. */
function Highlighted({ section, memory }: { section: string; memory: string }) {
  const { t } = useTranslation();
  const spans = sentencesDrawnOn(section, memory);
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
