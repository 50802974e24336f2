import { type FormEvent, useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { type DocumentRecord, type RunRecord, store } from './data';
import { agent, call, onRunEvent } from './client';
import { formatBytes, formatDate, formatNumber, formatRunBooks, formatTokens } from './format';
import type { ImportState } from './useImport';
import { noteDeleting, noteLibrary } from './lost-books';
import { bookLabel } from './BookOrder';
import { Collections } from './Collections';
import './sets.css';

interface Props {
  /** The books the Read form uses. */
  current: readonly DocumentRecord[];
  runs: readonly RunRecord[];
  imports: ImportState;
  /** Puts books on the Read form: one, or several to read together in this order. */
  onOpen(docs: DocumentRecord[]): void;
  onOpenRun(runId: string): void;
  /** After a document and its runs were deleted. */
  onDeleted(id: string): void;
  onError(message: string): void;
}

const FORMATS = ['text', 'markdown', 'html', 'epub', 'pdf', 'docx'] as const;
type Format = (typeof FORMATS)[number];
const isFormat = (f: string): f is Format => (FORMATS as readonly string[]).includes(f);

/** Every stored book: what it is, its runs, Open and Delete; several chosen are read together or kept as a collection. */
export function Library({ current, runs, imports, onOpen, onOpenRun, onDeleted, onError }: Props) {
  const { t } = useTranslation();
  const [docs, setDocs] = useState<DocumentRecord[]>([]);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [deletions, setDeletions] = useState(0);
  // A long book's exact count lands after its import.
  const [counted, setCounted] = useState(0);
  // The books chosen to read together, in the order they were chosen: the reading order.
  const [chosenIds, setChosen] = useState<string[]>([]);
  const [collectionName, setCollectionName] = useState('');
  const [saved, setSaved] = useState('');
  const ids = { strip: useId(), name: useId(), openWhy: useId() };
  const chosen = chosenIds.flatMap((id) => docs.filter((d) => d.id === id));

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

  const saveCollection = async (e: FormEvent) => {
    e.preventDefault();
    setSaved('');
    try {
      const kept = await call(agent.saveCollection(collectionName, chosenIds));
      setCollectionName('');
      setSaved(t('collections.saved', { name: kept.name }));
    } catch (err) {
      onError((err as Error).message);
    }
  };

  const remove = async (doc: DocumentRecord) => {
    setConfirming(null);
    setChosen((ids) => ids.filter((id) => id !== doc.id));
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
        <input id={ids.strip} type="checkbox" checked={imports.stripGutenberg} onChange={(e) => imports.setStripGutenberg(e.target.checked)} />
        <label htmlFor={ids.strip}>{t('library.strip')}</label>
      </div>
      {chosen.length > 0 && (
        <form className="library-choice" aria-label={t('collections.readTogether')} onSubmit={saveCollection}>
          <p aria-live="polite">{t('collections.chosen', { count: chosen.length, names: chosen.map((d) => d.name).join(', ') })}</p>
          <div className="controls">
            <button type="button" disabled={chosen.length < 2} onClick={() => onOpen(chosen)}>
              {t('collections.readTogether')}
            </button>
            <button type="button" onClick={() => setChosen([])}>
              {t('collections.clear')}
            </button>
          </div>
          {chosen.length < 2 && <p className="hint">{t('collections.needTwo')}</p>}
          <div className="field inline">
            <label htmlFor={ids.name}>{t('collections.name')}</label>
            <input id={ids.name} value={collectionName} maxLength={120} onChange={(e) => setCollectionName(e.target.value)} />
            <button type="submit" disabled={chosen.length < 2}>
              {t('collections.save')}
            </button>
          </div>
        </form>
      )}
      <p className="visually-hidden" aria-live="polite">
        {saved}
      </p>
      {docs.length === 0 ? (
        <p className="hint">{t('library.none')}</p>
      ) : (
        <ul className="library-list" aria-label={t('library.books')}>
          {docs.map((doc) => {
            // Its runs: those of it alone, and those over sets that hold it.
            const own = runs.filter((r) => r.documentId === doc.id || r.books?.some((b) => b.documentId === doc.id));
            const open = current.length === 1 && current[0]!.id === doc.id;
            const place = chosenIds.indexOf(doc.id);
            return (
              <li key={doc.id} aria-label={doc.name} aria-current={open || undefined} className={open ? 'doc current' : 'doc'}>
                <div className="doc-head">
                  <input
                    type="checkbox"
                    aria-label={t('collections.choose', { name: doc.name })}
                    checked={place >= 0}
                    onChange={(e) => setChosen((ids) => (e.target.checked ? [...ids, doc.id] : ids.filter((id) => id !== doc.id)))}
                  />
                  <div className="doc-name">
                    {place >= 0 && <span className="choice-order">{place + 1}. </span>}
                    {bookLabel(doc)}
                  </div>
                </div>
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
                        <span className="hint">
                          {[formatDate(r.createdAt), r.books ? formatRunBooks(r) : '', t(`runs.status.${r.status}`)].filter(Boolean).join(' · ')}
                        </span>
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
                    <button type="button" onClick={() => onOpen([doc])} disabled={open} aria-describedby={open ? ids.openWhy : undefined}>
                      {t('library.open')}
                    </button>
                    <button type="button" onClick={() => setConfirming(doc.id)}>
                      {t('library.delete')}
                    </button>
                    {/* Why Open is off: said beside it, and as its description. */}
                    {open && (
                      <span className="hint" id={ids.openWhy}>
                        {t('library.openAlready')}
                      </span>
                    )}
                  </div>
                )}
              </li>
            );
          })}
        </ul>
      )}
      <Collections docs={docs} deletions={deletions} onRead={onOpen} onError={onError} />
    </section>
  );
}
