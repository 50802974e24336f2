import { useTranslation } from 'react-i18next';
import { ConfirmDelete } from './ConfirmDelete';
import { RUN_ANSWER, type RunRecord } from './data';
import { formatRunBooks } from './format';
import { JobControls } from './JobControls';
import { ProgressBar } from './ProgressBar';
import { bookProgress, chunksOf } from './read-progress';
import { readStatus } from './read-status';
import { type SourceTarget, Sources } from './Sources';
import { answerText } from './answer-text';

/** What a read's own controls ask of every question of it. */
export type ReadAction = 'pause' | 'resume' | 'cancel' | 'delete';

interface Props {
  /** The run in view. */
  run: RunRecord;
  /** Every run stored here: the read's other questions are found among them. */
  runs: readonly RunRecord[];
  /** Shows another question of the read (the inspector then beside its revisions), at a source where given. */
  onShow(runId: string, source?: SourceTarget): void;
  /** Pauses, resumes, cancels or deletes the whole read; may answer false when the worker refused. */
  onRead(action: ReadAction, readId: string): unknown;
}

/**
 * The questions of one read (one press of Read with several questions): one
 * progress bar for the book, then every question's answer with its sources as
 * each finishes, and a switch that shows that question's revisions.
 */
export function ReadQuestions({ run, runs, onShow, onRead }: Props) {
  const { t } = useTranslation();
  const read = run.readId ? runs.filter((r) => r.readId === run.readId) : [];
  if (read.length < 2) return null;
  // Listed newest first: the runs of a read, a millisecond apart, come in the order the questions were asked.
  const questions = read.some((r) => r.id === run.id) ? read : [run, ...read];
  const { read: done, total, writing } = bookProgress(questions);
  const text = t('readQuestions.progressText', { read: done, total, writing, count: questions.length });
  const status = readStatus(questions.map((q) => q.status));
  const readId = run.readId!;
  return (
    <section className="read-questions" aria-label={t('readQuestions.region')}>
      {/* The bar's name and words, shown as well: its name and value already say them to assistive technology. */}
      <p className="hint progress-caption" aria-hidden="true">
        {t('readPage.captioned', { label: t('readQuestions.progress'), text })}
      </p>
      <ProgressBar label={t('readQuestions.progress')} value={done} max={total} text={text} />
      {/* The read as one; the controls under Reading progress act on the question in view alone. */}
      <JobControls
        status={status}
        onPause={() => onRead('pause', readId)}
        onResume={() => onRead('resume', readId)}
        onCancel={() => onRead('cancel', readId)}
        words={{
          pause: t('readQuestions.pause'),
          resume: t('readQuestions.resume'),
          cancel: t('readQuestions.cancel'),
          pausing: t('run.pausing'),
          cancelling: t('run.cancelling'),
        }}
      >
        {status !== 'running' && (
          <ConfirmDelete
            label={t('readQuestions.delete')}
            confirm={t('readQuestions.deleteConfirm')}
            question={t('readQuestions.deleteQuestion', { count: questions.length, book: formatRunBooks(run) })}
            yes={t('readQuestions.deleteYes')}
            keep={t('readQuestions.deleteKeep')}
            onDelete={() => void onRead('delete', readId)}
          />
        )}
      </JobControls>
      <ol>
        {questions.map((q) => (
          <li key={q.id}>
            <article aria-label={q.question} aria-current={q.id === run.id ? 'true' : undefined} className={q.id === run.id ? 'in-view' : undefined}>
              <h3>{q.question}</h3>
              {q.id === run.id && <p className="hint in-view-note">{t('readQuestions.inView')}</p>}
              {q.answer ? (
                <p className="answer-text">{answerText(q.answer)}</p>
              ) : (
                <p className="hint">{q.status === 'done' ? t('readQuestions.noAnswer') : t(`readQuestions.status.${q.status}`)}</p>
              )}
              {q.status === 'done' && q.answer !== undefined && (
                <Sources runId={q.id} answer={RUN_ANSWER} total={chunksOf(q)} onOpen={(target) => onShow(q.id, target)} />
              )}
              <button type="button" aria-pressed={q.id === run.id} aria-label={t('readQuestions.show', { question: q.question })} onClick={() => onShow(q.id)}>
                {t('readQuestions.showShort')}
              </button>
            </article>
          </li>
        ))}
      </ol>
    </section>
  );
}
