import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import type { DocumentRecord, RevisionRecord, RunRecord } from '../data';
import { retrievedFrom } from './infmem-plan';
import { type Chunk, type CitedMark, SectionPane, type SectionSet } from './SectionPane';

interface Props {
  run: RunRecord;
  /** The chunk, past where the read stopped. */
  chunk: Chunk;
  revisions: readonly RevisionRecord[];
  total: number;
  book: DocumentRecord | null;
  set?: SectionSet | undefined;
  /** The passage (or sentence) a link opened here, marked and focused in the section. */
  cited: CitedMark | null;
  onSelect(index: number): void;
}

/**
 * A chunk an InfMem read never read, opened from a passage a search retrieved
 * from it: why it was never read (no memory was written from it, so there is
 * none to show), the searches that retrieved its passages, and its section as
 * the book has it, the passage marked.
 */
export function NeverReadChunk({ run, chunk, revisions, total, book, set, cited, onSelect }: Props) {
  const { t } = useTranslation();
  const found = useMemo(() => retrievedFrom(revisions, chunk.index), [revisions, chunk.index]);
  const stopped = run.infmem?.stopped;
  return (
    <div className="detail">
      <section aria-label={t('infmem.neverReadRegion')} className="pane never-read">
        <h3>{t('infmem.neverReadTitle', { n: chunk.index + 1, total })}</h3>
        {stopped && <p>{t('infmem.neverReadWhy', { stop: stopped.index + 1, votes: stopped.votes })}</p>}
        {found.length ? (
          <>
            <p>{t('infmem.retrievedHere')}</p>
            <ul>
              {found.map((f) => (
                <li key={f.step}>
                  {t('infmem.retrievedAt', { count: f.ks.length, step: f.step + 1, k: f.ks.join(', ') })}{' '}
                  <button type="button" onClick={() => onSelect(f.step)}>
                    {t('infmem.showStep', { n: f.step + 1 })}
                  </button>
                </li>
              ))}
            </ul>
          </>
        ) : (
          <p className="hint">{t('infmem.neverRetrieved')}</p>
        )}
      </section>
      <SectionPane runId={run.id} chunk={chunk} total={total} book={book} set={set} cited={cited} memory={null} neverRead />
    </div>
  );
}
