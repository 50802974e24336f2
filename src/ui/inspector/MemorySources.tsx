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
      <ol aria-label={t('sources.memoryList')} tabIndex={0}>
        {groupNotes(shown.value.notes).map((group) => {
          const said = group.map((n) => n.text).join(' ');
          return (
            <li key={group[0]!.start}>
              {group.map((n, i) => (
                <span key={n.start}>
                  {i > 0 && ' '}
                  <q>{n.text}</q>
                </span>
              ))}
              {group[0]!.citations.length ? (
                group[0]!.citations.map((c) => (
                  <CitationItem
                    key={citationKey(c)}
                    runId={runId}
                    citation={c}
                    total={total}
                    onOpen={onOpen}
                    quoted={c.sentence !== undefined && sameWords(c.sentence.text, said)}
                  />
                ))
              ) : (
                <p className="source-none">{t('sources.noSource')}</p>
              )}
            </li>
          );
        })}
      </ol>
    </>
  );
}

type Note = Traced['notes'][number];

function citationKey(c: Note['citations'][number]): string {
  return `${c.revision}:${c.sentence?.start ?? ''}`;
}

/** Notes next to each other with the same sources (the clauses of one sentence, cut at its semicolons) are shown as one. */
function groupNotes(notes: readonly Note[]): Note[][] {
  const groups: Note[][] = [];
  for (const note of notes) {
    const last = groups.at(-1);
    const same = (a: Note, b: Note) => a.citations.length > 0 && a.citations.map(citationKey).join() === b.citations.map(citationKey).join();
    if (last && same(last[0]!, note)) last.push(note);
    else groups.push([note]);
  }
  return groups;
}

/** The same words, however the lines were wrapped: the memory quoted its sentence word for word. */
function sameWords(a: string, b: string): boolean {
  const words = (s: string) => s.replace(/\s+/g, ' ').trim();
  return words(a) === words(b);
}
