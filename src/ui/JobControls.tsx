import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import type { JobStatus } from './data';

interface Props {
  status: JobStatus;
  onPause(): void;
  onResume(): void;
  onCancel(): void;
  /** More controls after Pause, Resume and Cancel (a run's Delete). */
  children?: ReactNode;
}

/** Pause, Resume and Cancel, as a job's status allows: the same for a run and a sweep. */
export function JobControls({ status, onPause, onResume, onCancel, children }: Props) {
  const { t } = useTranslation();
  return (
    <div className="controls">
      {status === 'running' && (
        <button type="button" onClick={onPause}>
          {t('run.pause')}
        </button>
      )}
      {(status === 'paused' || status === 'cancelled' || status === 'failed') && (
        <button type="button" onClick={onResume}>
          {t('run.resume')}
        </button>
      )}
      {(status === 'running' || status === 'paused') && (
        <button type="button" onClick={onCancel}>
          {t('run.cancel')}
        </button>
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
