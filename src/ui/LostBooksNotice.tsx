import { useSyncExternalStore } from 'react';
import { useTranslation } from 'react-i18next';
import { booksLost, dismissLostBooks, onLostBooks } from './lost-books';

/** Says that the books stored in this browser are gone, and why that happens, until the person dismisses it. */
export function LostBooksNotice() {
  const { t } = useTranslation();
  const lost = useSyncExternalStore(onLostBooks, booksLost);
  if (!lost) return null;
  return (
    <div role="alert" aria-label={t('lostBooks.region')} className="app-status">
      <span>{t('lostBooks.what')}</span>
      <span>{t('lostBooks.todo')}</span>
      <button type="button" onClick={dismissLostBooks}>
        {t('lostBooks.dismiss')}
      </button>
    </div>
  );
}
