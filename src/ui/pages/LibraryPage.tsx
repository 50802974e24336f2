import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Page } from './Page';

interface Props {
  active: boolean;
  books: ReactNode;
  runs: ReactNode;
  storage: ReactNode;
  importProgress: ReactNode;
  error: ReactNode;
}

/** Books and runs kept in this browser, Import run, and the storage they take. */
export function LibraryPage({ active, books, runs, storage, importProgress, error }: Props) {
  const { t } = useTranslation();
  return (
    <Page place="library" active={active} title={t('library.title')} intro={t('library.intro')} className="library-page">
      <div className="library-main">
        {importProgress}
        {error}
        {books}
      </div>
      <div className="library-side">
        {runs}
        {storage}
      </div>
    </Page>
  );
}
