import { type ComponentProps, useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { type DocumentRecord, store } from './data';
import { onRunEvent } from './client';
import { bookLabel } from './BookOrder';
import { FilePicker } from './FilePicker';

/** The files a book may come in. */
const BOOK_FILES =
  '.txt,.text,.md,.markdown,.html,.htm,.xhtml,.epub,.pdf,.docx,text/plain,text/markdown,text/html,application/epub+zip,application/pdf,application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/** A chooser of book files, several at once, drawn as a button; the same file may be chosen again. */
export function BookFiles(props: Omit<ComponentProps<typeof FilePicker>, 'accept' | 'multiple'>) {
  return <FilePicker {...props} accept={BOOK_FILES} multiple />;
}

interface Props {
  /** The books the read takes now: the Library's others are offered. */
  books: readonly DocumentRecord[];
  /** Counts finished imports: the Library's books are read again. */
  libraryVersion: number;
  /** Files to add after the books there are. */
  onFiles(files: File[]): void;
  onAdd(doc: DocumentRecord): void;
}

/** More books for the read: files from this device, or books the Library keeps. */
export function AddBooks({ books, libraryVersion, onFiles, onAdd }: Props) {
  const { t } = useTranslation();
  const ids = { stored: useId() };
  const [stored, setStored] = useState<DocumentRecord[]>([]);
  const [chosen, setChosen] = useState('');
  const [changed, setChanged] = useState(0);

  useEffect(() => onRunEvent((e) => e.type === 'document' && setChanged((n) => n + 1)), []);
  useEffect(() => {
    let alive = true;
    void (async () => {
      const all = await (await store).listDocuments();
      if (alive) setStored(all.sort((a, b) => b.addedAt - a.addedAt));
    })();
    return () => {
      alive = false;
    };
  }, [libraryVersion, changed]);

  const offered = stored.filter((d) => !books.some((b) => b.id === d.id));
  const pick = offered.find((d) => d.id === chosen);

  return (
    <div className="add-books">
      <div className="field inline">
        <BookFiles label={t('sets.addFiles')} onFiles={onFiles}>
          {t('sets.addFiles')}
        </BookFiles>
      </div>
      {offered.length > 0 && (
        <div className="field inline">
          <label htmlFor={ids.stored}>{t('sets.addStored')}</label>
          <select id={ids.stored} value={pick ? chosen : ''} onChange={(e) => setChosen(e.target.value)}>
            <option value="">{t('sets.addStoredNone')}</option>
            {offered.map((d) => (
              <option key={d.id} value={d.id}>
                {bookLabel(d)}
              </option>
            ))}
          </select>
          <button
            type="button"
            disabled={!pick}
            onClick={() => {
              if (!pick) return;
              setChosen('');
              onAdd(pick);
            }}
          >
            {t('sets.add')}
          </button>
        </div>
      )}
      <p className="hint">{t('sets.room')}</p>
    </div>
  );
}
