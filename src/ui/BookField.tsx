import { type ReactNode, useId } from 'react';
import { useTranslation } from 'react-i18next';
import { AddBooks, BookFiles } from './AddBooks';
import { BookOrder } from './BookOrder';
import type { DocumentRecord } from './data';
import { formatBytes, formatTokens } from './format';
import type { BookOrigin } from './run-form';

interface Props {
  books: readonly DocumentRecord[];
  /** What the read takes, as one record (see readingOf). */
  document: DocumentRecord | null;
  importStatus?: ReactNode;
  fileError?: ReactNode;
  libraryVersion: number;
  onFiles(files: File[], append: boolean): void;
  onBooks(books: DocumentRecord[]): void;
  bookOrigin?: BookOrigin | null;
}

/** The Read form's Document: the picker naming the books held, their sizes, their order, and books added to them. */
export function BookField({ books, document, importStatus, fileError, libraryVersion, onFiles, onBooks, bookOrigin }: Props) {
  const { t } = useTranslation();
  const ids = { doc: useId(), label: useId(), chosen: useId() };
  return (
    <div className="field">
      <label htmlFor={ids.doc} id={ids.label}>
        {t('read.document')}
      </label>
      {/* The browser's own picker would say "No file chosen" beside a book the form holds: this one names the book. */}
      <div className="book-picker">
        <BookFiles id={ids.doc} labelledBy={ids.label} describedBy={ids.chosen} onFiles={(files) => onFiles(files, false)}>
          {t(books.length ? 'read.chooseOther' : 'read.choose')}
        </BookFiles>
        <span id={ids.chosen} className="book-picker-name">
          {books.length ? books.map((b) => b.name).join(', ') : t('read.noBook')}
        </span>
        {/* Why the form holds these books: a run opened here puts its own on the form, in place of none chosen. */}
        {books.length > 0 && bookOrigin && (
          <span className="book-picker-origin">{t(bookOrigin === 'run' ? 'readPage.bookFromRun' : 'readPage.bookChosen')}</span>
        )}
      </div>
      <p className="hint" aria-live="polite">
        {books.length > 1
          ? t('sets.documentHintMany', { count: books.length, size: formatBytes(document!.bytes), tokens: formatTokens(document!) })
          : document
            ? `${document.name} — ${formatBytes(document.bytes)}, ${formatTokens(document)}`
            : t('read.documentHint')}
      </p>
      {fileError}
      {importStatus}
      {books.length > 1 && <BookOrder books={books} onChange={onBooks} />}
      {books.length > 0 && (
        <AddBooks books={books} libraryVersion={libraryVersion} onFiles={(files) => onFiles(files, true)} onAdd={(doc) => onBooks([...books, doc])} />
      )}
    </div>
  );
}
