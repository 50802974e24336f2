import type { ReactNode, Ref } from 'react';
import { useTranslation } from 'react-i18next';
import { Page } from './Page';

interface Props {
  active: boolean;
  form: ReactNode;
  error: ReactNode;
  /** The run in view, or null before the first read. */
  run: ReactNode;
  runRef: Ref<HTMLDivElement>;
}

/** The Read form beside the run it started (side by side on a wide screen, one under the other on a narrow one). */
export function ReadPage({ active, form, error, run, runRef }: Props) {
  const { t } = useTranslation();
  return (
    <Page place="read" active={active} className="read-page">
      <div className="read-side">
        <header className="page-head">
          <h1 tabIndex={-1}>{t('read.title')}</h1>
          <p className="hint">{t('read.intro')}</p>
        </header>
        {form}
        {error}
      </div>
      <div className="read-main" ref={runRef} tabIndex={-1}>
        {run ?? <p className="empty">{t('read.empty')}</p>}
      </div>
    </Page>
  );
}
