import { useTranslation } from 'react-i18next';
import { ConfirmDelete } from '../ConfirmDelete';

/** "Delete evaluation", asked in place; `done` counts the samples (or dataset items) that go with it. */
export function EvaluationDelete({ done, onDelete }: { done: number; onDelete(): void }) {
  const { t } = useTranslation();
  return (
    <ConfirmDelete
      label={t('evaluate.delete')}
      confirm={t('evaluate.deleteConfirm')}
      question={t('evaluate.deleteQuestion', { count: done })}
      yes={t('evaluate.deleteYes')}
      keep={t('evaluate.deleteKeep')}
      onDelete={onDelete}
    />
  );
}
