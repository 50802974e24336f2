import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { MemorySources as Traced } from '../../agent/protocol';
import { agent, call } from '../client';
import { CitationItem, type SourceTarget } from '../Sources';

interface Props {
  runId: string;
  revision: number;
  total: number;
  onOpen(target: SourceTarget): void;
}

/** Each sentence of a revision's memory with where it came from in the book, traced by the worker when asked. */
export function MemorySources({ runId, revision, total, onOpen }: Props) {
  const { t } = useTranslation();
  const key = `${runId}:${revision}`;
  const [traced, setTraced] = useState<{ key: string; value?: Traced; error?: string } | null>(null);
  useEffect(() => {
    let alive = true;
    call(agent.traceMemory(runId, revision)).then(
      (value) => alive && setTraced({ key, value }),
      (e: Error) => alive && setTraced({ key, error: e.message }),
    );
    return () => {
      alive = false;
    };
  }, [runId, revision, key]);
  const shown = traced?.key === key ? traced : null;
  if (!shown) {
    return (
      <p className="hint" role="status">
        {t('sources.tracing')}
      </p>
    );
  }
  if (shown.error !== undefined || !shown.value) return <p className="error">{t('sources.failed', { error: shown.error ?? '' })}</p>;
  return (
    <>
      {!shown.value.sections && <p className="hint">{t('sources.noBook')}</p>}
      <ol aria-label={t('sources.memoryList')}>
        {shown.value.notes.map((note) => (
          <li key={note.start}>
            <q>{note.text}</q>
            {note.citations.length ? (
              note.citations.map((c) => (
                <CitationItem key={`${c.revision}:${c.sentence?.start ?? ''}`} runId={runId} citation={c} total={total} onOpen={onOpen} />
              ))
            ) : (
              <p className="source-none">{t('sources.noSource')}</p>
            )}
          </li>
        ))}
      </ol>
    </>
  );
}
