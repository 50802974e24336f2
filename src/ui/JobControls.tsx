import { type ReactNode, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { JobStatus } from './data';
import { type PendingControl, stillPending } from './job-pending';

interface Props {
  status: JobStatus;
  /** Each may answer false (or a promise of it) when the worker refused: the press is then no longer pending. */
  onPause(): unknown;
  onResume(): unknown;
  onCancel(): unknown;
  /** More controls after Pause, Resume and Cancel (a run's Delete). */
  children?: ReactNode;
  /** The buttons' words where they are not Pause, Resume and Cancel (a whole read's, beside one question's). */
  words?: ControlWords;
}

/** What the controls say: each button, and Pause and Cancel while pending. */
export interface ControlWords {
  pause: string;
  resume: string;
  cancel: string;
  pausing: string;
  cancelling: string;
}

/**
 * Pause, Resume and Cancel, as a job's status allows: the same for a run and a
 * sweep. A Pause or Cancel says "Pausing…" or "Cancelling…" from the press
 * until storage holds the new status, since the worker first stores it.
 */
export function JobControls({ status, onPause, onResume, onCancel, children, words: given }: Props) {
  const { t } = useTranslation();
  const words = given ?? {
    pause: t('run.pause'),
    resume: t('run.resume'),
    cancel: t('run.cancel'),
    pausing: t('run.pausing'),
    cancelling: t('run.cancelling'),
  };
  const [pressed, setPressed] = useState<PendingControl | null>(null);
  const pending = stillPending(pressed, status);
  // Answered: forgotten, so that the job coming back to that status (resumed) does not show it pending again.
  if (pressed && !pending) setPressed(null);
  const press = (action: PendingControl['action'], act: () => unknown) => () => {
    if (pending) return;
    const asked: PendingControl = { action, from: status };
    setPressed(asked);
    // A refused control (its error is shown by the page) is no longer pending.
    const refused = () => setPressed((p) => (p === asked ? null : p));
    void Promise.resolve(act()).then((answer) => answer === false && refused(), refused);
  };
  return (
    <div className="controls">
      {status === 'running' && (
        <button type="button" aria-disabled={pending ? true : undefined} onClick={press('pause', onPause)}>
          {pending?.action === 'pause' ? words.pausing : words.pause}
        </button>
      )}
      {(status === 'paused' || status === 'cancelled' || status === 'failed') && (
        <button type="button" onClick={onResume}>
          {words.resume}
        </button>
      )}
      {(status === 'running' || status === 'paused') && (
        <button type="button" aria-disabled={pending ? true : undefined} onClick={press('cancel', onCancel)}>
          {pending?.action === 'cancel' ? words.cancelling : words.cancel}
        </button>
      )}
      {pending && (
        <span role="status" className="hint">
          {t(pending.action === 'pause' ? 'run.pausingNote' : 'run.cancellingNote')}
        </span>
      )}
      {children}
    </div>
  );
}

/** Why a job stopped, when it did not stop on the person's word: paused by the app (a full disk, a lost GPU) or failed. */
export function JobStopAlert({ status, error, paused, failed }: { status: JobStatus; error?: string | undefined; paused: string; failed: string }) {
  if (status === 'paused' && error) {
    return (
      <p role="alert" className="error">
        {paused}
      </p>
    );
  }
  if (status !== 'failed') return null;
  return (
    <p role="alert" className="error">
      {failed}
    </p>
  );
}
