import { type FormEvent, useEffect, useId, useState } from 'react';
import * as Comlink from 'comlink';
import type { FollowUpRecord, RunRecord } from '../storage/db';
import { agent, call, onRunEvent, store } from './client';
import { formatDuration } from './format';
import './follow-up.css';

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
export function FollowUp({ run }: { run: RunRecord }) {
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
    if (!q) return setError('Type a question first: it is answered from the memory this read kept.');
    setError(null);
    setAsking(q);
    setWriting('');
    try {
      await call(agent.askFollowUp(run.id, q, Comlink.proxy((text: string) => setWriting(text))));
      setQuestion('');
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setAsking(null);
      setWriting('');
    }
  };

  return (
    <section aria-label="Follow-up" className="follow-up">
      <h3>Ask this memory again</h3>
      <p className="hint">
        A new question is answered from the final memory alone, without reading the book again. That memory kept what helped answer "{run.question}", so
        it may lack what another question needs.
      </p>
      <form className="follow-up-form" onSubmit={(e) => void ask(e)}>
        <label htmlFor={inputId}>Ask this memory</label>
        <input id={inputId} type="text" value={question} onChange={(e) => setQuestion(e.target.value)} autoComplete="off" />
        <button type="submit" disabled={asking !== null}>
          Ask
        </button>
      </form>
      {asking !== null && (
        <p className="hint" role="status">
          Answering "{asking}" from the memory…{writing ? ` ${writing}` : ''}
        </p>
      )}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {followUps.length > 0 && (
        <ol aria-label="Follow-up answers" className="follow-up-list">
          {followUps.map((f) => (
            <li key={f.index}>
              <p className="follow-up-question">{f.question}</p>
              <p className="answer-text">{f.answer}</p>
              <p className="hint">
                Answered from a memory kept for another question ("{run.question}") · written in {formatDuration(f.ms)}
              </p>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
