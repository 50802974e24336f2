import { useTranslation } from 'react-i18next';
import { RUN_ANSWER, type RunRecord } from './data';
import { engineUi } from './engines';
import { answerText } from './answer-text';
import { sentences } from './sentences';
import { type SourceTarget, Sources } from './Sources';

interface Props {
  run: RunRecord;
  /** The run is one question of a read of several: its answer shows in their list, and only the note stays here. */
  several: boolean;
  total: number;
  onOpenSource(target: SourceTarget): void;
}

/** The run's answer with its sources, or why there is none yet; a model-free engine's answer said to be picked sentences. */
export function RunAnswer({ run, several, total, onOpenSource }: Props) {
  const { t } = useTranslation();
  return (
    <>
      {several ? (
        run.answer !== undefined &&
        engineUi(run.engineId).noModel && (
          <p className="hint answer-kind" role="note">
            {sentences(t('run.picked'), t('run.pickedWriters'))}
          </p>
        )
      ) : (
        <section aria-label={t('run.answer')} className="answer">
          <h3>{t('run.answer')}</h3>
          {/* A model-free engine picks sentences; the page says so, and which engines would write an answer. */}
          {run.answer !== undefined && engineUi(run.engineId).noModel && (
            <p className="hint answer-kind" role="note">
              {sentences(t('run.picked'), t('run.pickedWriters'))}
            </p>
          )}
          {run.answer ? (
            <p className="answer-text">{answerText(run.answer)}</p>
          ) : run.answer !== undefined ? (
            <>
              <p className="hint">
                {t('run.noAnswer', {
                  prompts: run.prompts?.label ?? t('run.thePrompts'),
                  form:
                    run.prompts?.answerStyle === 'recurrent' ? t('run.formRecurrent') : run.prompts?.answerStyle === 'recurrent-boxed' ? ' (\\boxed{…})' : '',
                })}
              </p>
              <pre className="text">{run.reply ?? ''}</pre>
            </>
          ) : (
            <p className="hint">{t('run.answerLater')}</p>
          )}
          {run.status === 'done' && run.answer !== undefined && <Sources runId={run.id} answer={RUN_ANSWER} total={total} onOpen={onOpenSource} />}
        </section>
      )}
    </>
  );
}
