import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { type CollectionRecord, type DocumentRecord, store } from './data';
import { agent, call, onRunEvent } from './client';

interface Props {
  /** The books the Library holds: a collection names some of them. */
  docs: readonly DocumentRecord[];
  /** Counts the books deleted: a deletion takes its book out of the collections. */
  deletions: number;
  /** Puts a collection's books on the Read form, in its order. */
  onRead(docs: DocumentRecord[]): void;
  onError(message: string): void;
}

/** The collections kept in this browser: each can be read again, or deleted without its books. */
export function Collections({ docs, deletions, onRead, onError }: Props) {
  const { t } = useTranslation();
  const [collections, setCollections] = useState<CollectionRecord[]>([]);
  const [changed, setChanged] = useState(0);
  const [confirming, setConfirming] = useState<string | null>(null);

  useEffect(() => onRunEvent((e) => e.type === 'collection' && setChanged((n) => n + 1)), []);
  useEffect(() => {
    let alive = true;
    void (async () => {
      const all = await (await store).listCollections();
      if (alive) setCollections(all);
    })();
    return () => {
      alive = false;
    };
  }, [changed, deletions]);

  const remove = async (c: CollectionRecord) => {
    setConfirming(null);
    try {
      await call(agent.deleteCollection(c.id));
    } catch (e) {
      onError((e as Error).message);
    } finally {
      setChanged((n) => n + 1);
    }
  };

  return (
    <section aria-label={t('collections.title')} className="collections">
      <h2>{t('collections.title')}</h2>
      <p className="hint">{collections.length ? t('collections.intro') : t('collections.none')}</p>
      {collections.length > 0 && (
        <ul className="library-list" aria-label={t('collections.title')}>
          {collections.map((c) => {
            const books = c.documentIds.flatMap((id) => docs.filter((d) => d.id === id));
            return (
              <li key={c.id} aria-label={c.name} className="doc">
                <div className="doc-name">{c.name}</div>
                <div className="hint">{t('collections.books', { count: books.length, names: books.map((d) => d.name).join(', ') })}</div>
                {confirming === c.id ? (
                  <div className="controls" role="group" aria-label={t('collections.confirm')}>
                    <span>{t('collections.deleteQuestion', { name: c.name })}</span>
                    <button type="button" onClick={() => void remove(c)}>
                      {t('collections.yes')}
                    </button>
                    <button type="button" onClick={() => setConfirming(null)}>
                      {t('collections.keep')}
                    </button>
                  </div>
                ) : (
                  <div className="controls">
                    <button type="button" disabled={books.length === 0} onClick={() => onRead(books)}>
                      {t('collections.read')}
                    </button>
                    <button type="button" onClick={() => setConfirming(c.id)}>
                      {t('collections.delete')}
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
