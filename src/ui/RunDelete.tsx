import { useId, useLayoutEffect, useRef, useState } from 'react';
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

/**
 * "Delete run", asking first in a modal dialog before the run, its revisions
 * and memories go; its book stays. Focus starts on "Keep run", Escape keeps
 * the run too, and focus comes back to "Delete run" when it stays.
 */
export function RunDelete({ run, revisions, onDelete }: Props) {
  const { t } = useTranslation();
  const [confirming, setConfirming] = useState(false);
  const opener = useRef<HTMLButtonElement>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  const keep = useRef<HTMLButtonElement>(null);
  const deleting = useRef(false);
  const questionId = useId();

  // Opened before it is painted, so a closed dialog never shows; the choice that loses nothing has focus.
  useLayoutEffect(() => {
    if (!confirming || !dialog.current || dialog.current.open) return;
    dialog.current.showModal();
    keep.current?.focus();
  }, [confirming]);

  const closed = () => {
    setConfirming(false);
    if (!deleting.current) opener.current?.focus();
  };

  return (
    <>
      <button ref={opener} type="button" onClick={() => setConfirming(true)}>
        {t('runDelete.delete')}
      </button>
      {confirming && (
        <dialog
          ref={dialog}
          role="alertdialog"
          aria-label={t('runDelete.confirm')}
          aria-describedby={questionId}
          className="run-confirm-dialog"
          onClose={closed}
        >
          <p id={questionId}>
            {revisions ? t('runDelete.questionRevisions', { count: revisions }) : t('runDelete.question')}{' '}
            {t('runDelete.bookStays', { book: formatRunBooks(run) })}
          </p>
          <div className="run-confirm">
            <button
              type="button"
              onClick={() => {
                deleting.current = true;
                dialog.current?.close();
                onDelete();
              }}
            >
              {t('runDelete.yes')}
            </button>
            <button ref={keep} type="button" onClick={() => dialog.current?.close()}>
              {t('runDelete.keep')}
            </button>
          </div>
        </dialog>
      )}
    </>
  );
}
