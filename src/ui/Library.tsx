import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { type DocumentRecord, type RunRecord, store } from './data';
import { agent, call, onRunEvent } from './client';
import { formatBytes, formatDate, formatNumber, formatTokens } from './format';
import type { ImportState } from './useImport';
import { noteDeleting, noteLibrary } from './lost-books';

interface Props {
  /** The document the Read form uses. */
  current: DocumentRecord | null;
  runs: readonly RunRecord[];
  imports: ImportState;
  onOpen(doc: DocumentRecord): void;
  onOpenRun(runId: string): void;
  /** After a document and its runs were deleted. */
  onDeleted(id: string): void;
  onError(message: string): void;
}

const FORMATS = ['text', 'markdown', 'html', 'epub', 'pdf', 'docx'] as const;
type Format = (typeof FORMATS)[number];
const isFormat = (f: string): f is Format => (FORMATS as readonly string[]).includes(f);

/** Every stored book: what it is, its runs, and Open and Delete. */
export function Library({ current, runs, imports, onOpen, onOpenRun, onDeleted, onError }: Props) {
  const { t } = useTranslation();
  const [docs, setDocs] = useState<DocumentRecord[]>([]);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [deletions, setDeletions] = useState(0);
  // A long book's exact count lands after its import.
  const [counted, setCounted] = useState(0);
  const stripId = useId();

  useEffect(() => onRunEvent((e) => e.type === 'document' && setCounted((n) => n + 1)), []);

  useEffect(() => {
    let alive = true;
    void (async () => {
      const all = await (await store).listDocuments();
      all.sort((a, b) => b.addedAt - a.addedAt);
      noteLibrary(all);
      if (alive) setDocs(all);
    })();
    return () => {
      alive = false;
    };
  }, [imports.version, deletions, runs.length, counted]);

  const remove = async (doc: DocumentRecord) => {
    setConfirming(null);
    noteDeleting(doc.id, docs);
    try {
      await call(agent.deleteDocument(doc.id));
      onDeleted(doc.id);
    } catch (e) {
      onError((e as Error).message);
    } finally {
      setDeletions((n) => n + 1);
    }
  };

  return (
    <section aria-label={t('library.title')} className="library">
      <h2>{t('library.books')}</h2>
      <div className="check">
        <input id={stripId} type="checkbox" checked={imports.stripGutenberg} onChange={(e) => imports.setStripGutenberg(e.target.checked)} />
        <label htmlFor={stripId}>{t('library.strip')}</label>
      </div>
      {docs.length === 0 ? (
        <p className="hint">{t('library.none')}</p>
      ) : (
        <ul className="library-list" aria-label={t('library.books')}>
          {docs.map((doc) => {
            const own = runs.filter((r) => r.documentId === doc.id);
            const open = current?.id === doc.id;
            return (
              <li key={doc.id} aria-label={doc.name} aria-current={open || undefined} className={open ? 'doc current' : 'doc'}>
                <div className="doc-name">{doc.title && doc.title !== doc.name ? `${doc.title} (${doc.name})` : doc.name}</div>
                <div className="hint">
                  {[
                    isFormat(doc.format ?? 'text') ? t(`library.format.${(doc.format ?? 'text') as Format}`) : doc.format,
                    formatBytes(doc.bytes),
                    formatTokens(doc),
                    doc.pages ? t('library.pages', { n: doc.pages }) : '',
                    t('library.added', { date: formatDate(doc.addedAt) }),
                    doc.importing ? t('library.storing') : '',
                  ]
                    .filter(Boolean)
                    .join(' · ')}
                </div>
                {doc.stripped && (
                  <div className="hint">{t('library.stripped', { header: formatNumber(doc.stripped.header), footer: formatNumber(doc.stripped.footer) })}</div>
                )}
                {own.length > 0 && (
                  <ul className="doc-runs" aria-label={t('library.runsOf', { name: doc.name })}>
                    {own.map((r) => (
                      <li key={r.id}>
                        <button type="button" className="link" onClick={() => onOpenRun(r.id)}>
                          {r.question}
                        </button>{' '}
                        <span className="hint">{t(`runs.status.${r.status}`)}</span>
                      </li>
                    ))}
                  </ul>
                )}
                {confirming === doc.id ? (
                  <div className="controls" role="group" aria-label={t('library.confirm')}>
                    <span>{own.length ? t('library.deleteQuestionRuns', { count: own.length }) : t('library.deleteQuestion')}</span>
                    <button type="button" onClick={() => void remove(doc)}>
                      {t('library.yes')}
                    </button>
                    <button type="button" onClick={() => setConfirming(null)}>
                      {t('library.keep')}
                    </button>
                  </div>
                ) : (
                  <div className="controls">
                    <button type="button" onClick={() => onOpen(doc)} disabled={open}>
                      {t('library.open')}
                    </button>
                    <button type="button" onClick={() => setConfirming(doc.id)}>
                      {t('library.delete')}
                    </button>
                  </div>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
