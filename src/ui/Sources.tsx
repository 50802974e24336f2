import { type MouseEvent, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { isNoAnswer, type Unsourced } from '../core/citations/citation';
import { type SourcesRecord, type StoredCitation, store } from './data';
import { agent, call, onRunEvent } from './client';
import './sources.css';

/** Where a source link leads: a revision, and the cited sentence by its characters in the run's text. */
export interface SourceTarget {
  revision: number;
  start?: number;
  end?: number;
}

/** Answers whose missing sources this page asked the worker to trace: once each, however often they are shown. */
const asked = new Set<string>();

/**
 * The sources of one answer of a finished run as storage holds them, kept
 * current by the worker's events; undefined until traced. A run from before
 * sources were kept has them traced when first shown.
 */
function useAnswerSources(runId: string, answer: number): { record?: SourcesRecord; error?: string } {
  const [state, setState] = useState<{ key: string; record?: SourcesRecord; error?: string }>({ key: '' });
  const key = `${runId}:${answer}`;
  useEffect(() => {
    let alive = true;
    const read = async () => {
      // A stored record that cannot be read is traced again by the worker, which reports its own failure.
      const record = await (await store).getSources(runId, answer).catch(() => undefined);
      if (!alive) return;
      if (record) return setState({ key, record });
      if (asked.has(key)) return;
      asked.add(key);
      await call(agent.findSources(runId)).catch((e: Error) => alive && setState({ key, error: e.message }));
    };
    void read();
    const stop = onRunEvent((e) => {
      if (e.type === 'sources' && e.runId === runId && e.answer === answer) void read();
    });
    return () => {
      alive = false;
      stop();
    };
  }, [runId, answer, key]);
  return state.key === key ? state : {};
}

/** The address of a source: the run at that revision with the sentence marked, as the link's target. */
export function sourceHref(runId: string, target: SourceTarget): string {
  const url = new URL(location.href);
  url.searchParams.set('run', runId);
  url.searchParams.set('rev', String(target.revision + 1));
  if (target.start !== undefined && target.end !== undefined) url.searchParams.set('cite', `${target.start}-${target.end}`);
  else url.searchParams.delete('cite');
  url.hash = '#/';
  return url.href;
}

interface CitationProps {
  runId: string;
  citation: StoredCitation;
  /** Chunks of the run: "section 12 of 81". */
  total: number;
  onOpen(target: SourceTarget): void;
  /** The sentence is quoted word for word just before (a memory's note): it is not said twice. */
  quoted?: boolean;
}

/** One cited sentence: quoted, with its place, the revision that wrote it down, and a link into the inspector. */
export function CitationItem({ runId, citation: c, total, onOpen, quoted = false }: CitationProps) {
  const { t } = useTranslation();
  const target: SourceTarget = { revision: c.revision, ...(c.sentence && { start: c.sentence.start, end: c.sentence.end }) };
  const open = (e: MouseEvent) => {
    // A plain click opens it here; a click that asks for a new tab or window goes by the address.
    if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    onOpen(target);
  };
  const kept = c.revision === c.keptUntil ? t('sources.written', { n: c.revision + 1 }) : t('sources.kept', { n: c.revision + 1, until: c.keptUntil + 1 });
  // A quotation with its attribution: a figure, not a list item, so that the lists it sits in (follow-up answers) keep their items.
  const caption = (
    <>
      <span className="source-place">
        {[c.place, t('sources.section', { n: c.revision + 1, total }), kept].filter(Boolean).join(' · ')}
        {c.returned ? ` · ${t('sources.returned')}` : ''}
      </span>{' '}
      <a href={sourceHref(runId, target)} onClick={open}>
        {t('sources.show', { n: c.revision + 1 })}
      </a>
    </>
  );
  if (quoted) return <p className="source">{caption}</p>;
  return (
    <figure className="source">
      {c.sentence ? (
        <blockquote className="source-text">{c.sentence.text}</blockquote>
      ) : (
        <p className="hint">
          {c.notes.join(' ')} — {t('sources.inSection')}
        </p>
      )}
      <figcaption>{caption}</figcaption>
    </figure>
  );
}

/** Something no section supports, shown as the finding it is. */
export function UnsourcedItem({ item }: { item: Unsourced }) {
  const { t } = useTranslation();
  return (
    <figure className="source unsourced">
      <blockquote className="source-text">{item.text}</blockquote>
      <figcaption>
        <span className="source-none">{t('sources.noSource')}</span>{' '}
        <span className="hint">{t(item.reason === 'memory' ? 'sources.noSourceMemory' : 'sources.noSourceAnswer')}</span>
      </figcaption>
    </figure>
  );
}

interface Props {
  runId: string;
  /** -1 (RUN_ANSWER) for the run's own answer, else the follow-up answer's index. */
  answer: number;
  total: number;
  onOpen(target: SourceTarget): void;
}

/** "Sources" under an answer: each sentence of the book its facts came from, or that none did. */
export function Sources({ runId, answer, total, onOpen }: Props) {
  const { t } = useTranslation();
  const { record, error } = useAnswerSources(runId, answer);
  // A reply that answers nothing claims nothing from the book: no sources to list (a record traced before this knew it lists the reply itself).
  const unsourced = record?.unsourced.filter((u) => !(u.reason === 'answer' && isNoAnswer(u.text))) ?? [];
  if (record && record.citations.length + unsourced.length === 0) return null;
  return (
    <section aria-label={t('sources.region')} className="sources">
      <h4>{t('sources.region')}</h4>
      {!record ? (
        <p className="hint" role="status">
          {error ? t('sources.failed', { error }) : t('sources.finding')}
        </p>
      ) : (
        <>
          {!record.sections && record.citations.length > 0 && <p className="hint">{t('sources.noBook')}</p>}
          <div className="source-list">
            {record.citations.map((c) => (
              <CitationItem key={`${c.revision}:${c.sentence?.start ?? ''}`} runId={runId} citation={c} total={total} onOpen={onOpen} />
            ))}
            {unsourced.map((u, i) => (
              <UnsourcedItem key={`u${i}`} item={u} />
            ))}
          </div>
        </>
      )}
    </section>
  );
}
