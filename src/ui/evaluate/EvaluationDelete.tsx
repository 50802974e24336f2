import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';

interface Props {
  /** Samples (or dataset items) stored for the evaluation. */
  done: number;
  onDelete(): void;
}

/**
 * "Delete evaluation", asking first in place as the Library asks before a
 * book goes: focus moves to "Keep evaluation", and back to "Delete
 * evaluation" when it is kept.
 */
export function EvaluationDelete({ done, onDelete }: Props) {
  const { t } = useTranslation();
  const [confirming, setConfirming] = useState(false);
  const opener = useRef<HTMLButtonElement>(null);
  const keep = useRef<HTMLButtonElement>(null);
  const asked = useRef(false);

  useEffect(() => {
    if (confirming) keep.current?.focus();
    else if (asked.current) opener.current?.focus();
  }, [confirming]);

  if (!confirming) {
    return (
      <button
        ref={opener}
        type="button"
        onClick={() => {
          asked.current = true;
          setConfirming(true);
        }}
      >
        {t('evaluate.delete')}
      </button>
    );
  }
  return (
    <span className="controls" role="group" aria-label={t('evaluate.deleteConfirm')}>
      <span>{t('evaluate.deleteQuestion', { count: done })}</span>
      <button type="button" onClick={onDelete}>
        {t('evaluate.deleteYes')}
      </button>
      <button ref={keep} type="button" onClick={() => setConfirming(false)}>
        {t('evaluate.deleteKeep')}
      </button>
    </span>
  );
}
