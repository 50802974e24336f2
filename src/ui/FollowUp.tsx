import { type FormEvent, useEffect, useId, useState } from 'react';
import * as Comlink from 'comlink';
import { useTranslation } from 'react-i18next';
import { type FollowUpRecord, type RunRecord, store } from './data';
import { agent, call, onRunEvent } from './client';
import { formatDuration } from './format';
import { type SourceTarget, Sources } from './Sources';
import { engineUi } from './engines';
import './follow-up.css';
import { answerText } from './answer-text';

/** A run's follow-up answers as storage holds them, kept current by the worker's events. */
function useFollowUps(runId: string): FollowUpRecord[] {
  const [followUps, setFollowUps] = useState<FollowUpRecord[]>([]);
  useEffect(() => {
    let alive = true;
    const refresh = async () => {
      const all = await (await store).listFollowUps(runId).catch(() => null);
      if (alive && all) setFollowUps(all);
    };
    void refresh();
    const unsubscribe = onRunEvent((e) => {
      if (e.type === 'followUp' && e.runId === runId) void refresh();
    });
    return () => {
      alive = false;
      unsubscribe();
    };
  }, [runId]);
  return followUps;
}

/**
 * Asks a finished run's final memory another question: one answer step, no
 * reading. The worker stores the answer before it is listed here.
 */
export function FollowUp({ run, total, onOpenSource }: { run: RunRecord; total: number; onOpenSource(target: SourceTarget): void }) {
  const { t } = useTranslation();
  const inputId = useId();
  const followUps = useFollowUps(run.id);
  const [question, setQuestion] = useState('');
  const [asking, setAsking] = useState<string | null>(null);
  const [writing, setWriting] = useState('');
  const [error, setError] = useState<string | null>(null);

  const ask = async (e: FormEvent) => {
    e.preventDefault();
    if (asking) return;
    const q = question.trim();
    if (!q) return setError(t('followUp.needQuestion'));
    setError(null);
    setAsking(q);
    setWriting('');
    try {
      await call(
        agent.askFollowUp(
          run.id,
          q,
          Comlink.proxy((text: string) => setWriting(text)),
        ),
      );
      setQuestion('');
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setAsking(null);
      setWriting('');
    }
  };

  return (
    <section aria-label={t('followUp.region')} className="follow-up">
      {/* "Again" once the memory has been asked something beyond the read's own question. */}
      <h3>{t(followUps.length ? 'followUp.title' : 'followUp.titleFirst')}</h3>
      <p className="hint">{t('followUp.intro', { question: run.question })}</p>
      <form className="follow-up-form" onSubmit={(e) => void ask(e)}>
        <label htmlFor={inputId}>{t('followUp.field')}</label>
        <input id={inputId} type="text" value={question} onChange={(e) => setQuestion(e.target.value)} autoComplete="off" />
        <button type="submit" disabled={asking !== null}>
          {t('followUp.ask')}
        </button>
      </form>
      {asking !== null && (
        <p className="hint" role="status">
          {t('followUp.answering', { question: asking })}
          {writing ? ` ${writing}` : ''}
        </p>
      )}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {followUps.length > 0 && (
        <ol aria-label={t('followUp.list')} className="follow-up-list">
          {followUps.map((f) => (
            <li key={f.index}>
              <p className="follow-up-question">{f.question}</p>
              <p className="answer-text">{answerText(f.answer)}</p>
              <p className="hint">
                {t('followUp.answeredFrom', { question: run.question, duration: formatDuration(f.ms) })}
                {engineUi(run.engineId).noModel ? ` · ${t('followUp.picked')}` : ''}
              </p>
              <Sources runId={run.id} answer={f.index} total={total} onOpen={onOpenSource} />
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
