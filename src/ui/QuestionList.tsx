import { useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { BatchSize } from '../agent/protocol';
import { i18n } from './i18n';
import './questions.css';

interface Props {
  questions: readonly string[];
  onChange(questions: string[]): void;
  /** The engine chosen: how it writes several questions' memories is said under the boxes. */
  engineId: string;
  /** How many questions it writes together on this device and why, where it has told (WebLLM). */
  batch?: BatchSize | undefined;
}

/** How each engine writes a step for several questions (see batchSender): the hint that says so. */
const SEVERAL = { webllm: 'questions.batched', openai: 'questions.server', wllama: 'questions.turns', extractive: 'questions.picked' } as const;

/**
 * The question box, and more of them on request: Read then reads the book
 * once for all of them, each question with a memory of its own. The first box keeps its plain name, "Question"; the
 * others are numbered, and each can be removed.
 */
export function QuestionList({ questions, onChange, engineId, batch }: Props) {
  const { t } = useTranslation();
  const base = useId();
  // The hint under the boxes describes each box, so that it is heard with the question being written.
  const hint = questions.length > 1 ? `${base}-hint` : undefined;
  // Keys that follow each box when an earlier one is removed, so that a box keeps its caret and undo history.
  const [keys, setKeys] = useState<number[]>(() => questions.map((_, i) => i));
  const boxes = useRef(new Map<number, HTMLTextAreaElement>());
  // Where the keyboard goes once the box added or removed is drawn.
  const focusNext = useRef<number | null>(null);
  // Questions set from outside (settings read back) get keys past every key in use.
  const shown = keys.length === questions.length ? keys : questions.map((_, i) => keys[i] ?? keyPast(keys) + i);

  // After every render: adding or removing a box always renders, since it changes the keys. Kept until the box is
  // drawn, so that a render between the click and the new box cannot drop it.
  useEffect(() => {
    if (focusNext.current === null) return;
    const box = boxes.current.get(focusNext.current);
    if (!box) return;
    box.focus();
    focusNext.current = null;
  });

  const add = () => {
    const key = keyPast(shown);
    setKeys([...shown, key]);
    onChange([...questions, '']);
    focusNext.current = key;
  };

  const remove = (i: number) => {
    setKeys(shown.filter((_, j) => j !== i));
    onChange(questions.filter((_, j) => j !== i));
    focusNext.current = shown[i + 1] ?? shown[i - 1]!;
  };

  return (
    <div className="question-list">
      {questions.map((question, i) => {
        const key = shown[i]!;
        const name = i === 0 ? t('questions.first') : t('questions.numbered', { n: i + 1 });
        return (
          <div className="field question-item" key={key}>
            <div className="question-head">
              <label htmlFor={`${base}-${key}`}>{name}</label>
              {i > 0 && (
                <button type="button" className="question-remove" onClick={() => remove(i)}>
                  {t('questions.remove', { n: i + 1 })}
                </button>
              )}
            </div>
            <textarea
              id={`${base}-${key}`}
              ref={(el) => {
                if (el) boxes.current.set(key, el);
                else boxes.current.delete(key);
              }}
              rows={i === 0 ? 3 : 2}
              value={question}
              aria-describedby={hint}
              onChange={(e) => onChange(questions.map((q, j) => (j === i ? e.target.value : q)))}
            />
          </div>
        );
      })}
      <div className="question-add">
        <button type="button" onClick={add}>
          {t('questions.add')}
        </button>
        {hint && (
          <p id={hint} className="hint">
            {batch ? batchHint(batch, questions.length) : t(SEVERAL[engineId as keyof typeof SEVERAL] ?? SEVERAL.wllama, { count: questions.length })}
          </p>
        )}
      </div>
    </div>
  );
}

/** What the hint says once the engine has told how many questions go together on this device, or what it waits for. */
function batchHint(batch: BatchSize, count: number): string {
  if ('waitsFor' in batch) return i18n.t(batch.waitsFor === 'gpu' ? 'questions.batchNoGpu' : 'questions.batchLater', { count });
  const key = batch.size >= count ? 'questions.batchAll' : batch.size === 1 ? 'questions.batchOne' : 'questions.batchGroups';
  return i18n.t(key, { count, size: batch.size, reason: batch.reason });
}

/** A key that no box in `keys` has. */
function keyPast(keys: readonly number[]): number {
  return keys.reduce((most, k) => Math.max(most, k + 1), 0);
}
