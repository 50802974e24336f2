import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { RunRecord } from './data';
import { formatRunBooks } from './format';
import './durability.css';

interface Props {
  run: RunRecord;
  /** Revisions stored for the run. */
  revisions: number;
  onDelete(): void;
}

/** "Delete run", asking once before the run, its revisions and memories go; its book stays. */
export function RunDelete({ run, revisions, onDelete }: Props) {
  const { t } = useTranslation();
  const [confirming, setConfirming] = useState(false);
  if (!confirming) {
    return (
      <button type="button" onClick={() => setConfirming(true)}>
        {t('runDelete.delete')}
      </button>
    );
  }
  return (
    <div role="group" aria-label={t('runDelete.confirm')} className="run-confirm">
      <span>
        {revisions ? t('runDelete.questionRevisions', { count: revisions }) : t('runDelete.question')} {t('runDelete.bookStays', { book: formatRunBooks(run) })}
      </span>
      <button
        type="button"
        onClick={() => {
          setConfirming(false);
          onDelete();
        }}
      >
        {t('runDelete.yes')}
      </button>
      <button type="button" onClick={() => setConfirming(false)}>
        {t('runDelete.keep')}
      </button>
    </div>
  );
}
