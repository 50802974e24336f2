import { useTranslation } from 'react-i18next';
import { ConfirmDelete } from './ConfirmDelete';
import type { RunRecord } from './data';
import { formatRunBooks } from './format';
import { sentences } from './sentences';

interface Props {
  run: RunRecord;
  /** Revisions stored for the run. */
  revisions: number;
  onDelete(): void;
}

/**
 * "Delete run", asking first in place (as for a book, a read or an
 * evaluation) before the run, its revisions and memories go; its book stays.
 * Focus starts on "Keep run", Escape keeps the run too, and focus comes back
 * to "Delete run" when it stays.
 */
export function RunDelete({ run, revisions, onDelete }: Props) {
  const { t } = useTranslation();
  return (
    <ConfirmDelete
      label={t('runDelete.delete')}
      confirm={t('runDelete.confirm')}
      question={sentences(
        revisions ? t('runDelete.questionRevisions', { count: revisions }) : t('runDelete.question'),
        t('runDelete.bookStays', { book: formatRunBooks(run) }),
      )}
      yes={t('runDelete.yes')}
      keep={t('runDelete.keep')}
      onDelete={onDelete}
    />
  );
}
