import type { Dispatch, SetStateAction } from 'react';
import { useTranslation } from 'react-i18next';
import type { DocumentRecord } from './data';
import type { ImportState } from './useImport';

export interface AddBooksOptions {
  imports: ImportState;
  /** The engine whose tokenizer counts a new book's tokens. */
  importEngine: string;
  setBooks: Dispatch<SetStateAction<DocumentRecord[]>>;
  setError(message: string | null): void;
  setBusy(busy: boolean): void;
  /** Reloads the run list (a book that failed takes the reads started on it). */
  refreshRuns(): Promise<void>;
}

/**
 * The Read form's file adding: imports files one after another, in their
 * order; they replace the form's books, or with `append` join them at the end.
 * Each book joins the form as soon as it can be read; a file that fails is
 * named, and the others are still added.
 */
export function useAddBooks({ imports, importEngine, setBooks, setError, setBusy, refreshRuns }: AddBooksOptions) {
  const { t } = useTranslation();
  return async (files: readonly File[], append = false): Promise<void> => {
    setError(null);
    setBusy(true);
    if (!append) setBooks([]);
    const failed: string[] = [];
    for (const file of files) {
      let usable: string | null = null;
      try {
        const doc = await imports.importFile(file, importEngine, (d) => {
          // Readable now, while the rest of its text is stored.
          usable = d.id;
          setBooks((current) => (current.some((b) => b.id === d.id) ? current : [...current, d]));
          if (files.length === 1) setBusy(false);
        });
        // The form now has the whole book, or the same book stored before; unless it was taken off the form meanwhile.
        const shown = usable;
        setBooks((current) =>
          current.some((b) => b.id === doc.id) ? current.map((b) => (b.id === doc.id ? doc : b)) : shown === null ? [...current, doc] : current,
        );
      } catch (e) {
        failed.push(files.length > 1 ? t('sets.notAdded', { name: file.name, error: (e as Error).message }) : (e as Error).message);
        // Nothing of a book that failed to store completely is kept (nor the reads started on it).
        if (usable !== null) {
          const gone = usable;
          setBooks((current) => current.filter((b) => b.id !== gone));
          void refreshRuns();
        }
      }
    }
    setBusy(false);
    if (failed.length) setError(failed.join(' '));
  };
}
