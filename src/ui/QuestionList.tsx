import { useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import './questions.css';

interface Props {
  questions: readonly string[];
  onChange(questions: string[]): void;
}

/**
 * The question box, and more of them on request: Read then reads the book
 * once per question. The first box keeps its plain name, "Question"; the
 * others are numbered, and each can be removed.
 */
export function QuestionList({ questions, onChange }: Props) {
  const { t } = useTranslation();
  const base = useId();
  // Keys that follow each box when an earlier one is removed, so that a box keeps its caret and undo history.
  const [keys, setKeys] = useState<number[]>(() => questions.map((_, i) => i));
  const nextKey = useRef(questions.length);
  const boxes = useRef(new Map<number, HTMLTextAreaElement>());
  // Where the keyboard goes after adding or removing a box.
  const [focus, setFocus] = useState<number | null>(null);
  const shown = keys.length === questions.length ? keys : questions.map((_, i) => keys[i] ?? nextKey.current + i);

  useEffect(() => {
    if (focus === null) return;
    boxes.current.get(focus)?.focus();
    setFocus(null);
  }, [focus]);

  const add = () => {
    const key = nextKey.current++;
    setKeys([...shown, key]);
    onChange([...questions, '']);
    setFocus(key);
  };

  const remove = (i: number) => {
    setKeys(shown.filter((_, j) => j !== i));
    onChange(questions.filter((_, j) => j !== i));
    setFocus(shown[i + 1] ?? shown[i - 1]!);
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
              onChange={(e) => onChange(questions.map((q, j) => (j === i ? e.target.value : q)))}
            />
          </div>
        );
      })}
      <div className="question-add">
        <button type="button" onClick={add}>
          {t('questions.add')}
        </button>
        {questions.length > 1 && (
          <p className="hint">
            {t('questions.several', { count: questions.length })}
          </p>
        )}
      </div>
    </div>
  );
}
