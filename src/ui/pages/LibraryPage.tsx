import type { ReactNode } from 'react';
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
  return (
    <Page place="library" active={active} title="Library" intro="Books and runs kept in this browser, and the storage they take." className="library-page">
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
