import { type DragEvent, useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { DocumentRecord } from './data';
import { formatTokens } from './format';
import './sets.css';

interface Props {
  books: readonly DocumentRecord[];
  onChange(books: DocumentRecord[]): void;
}

/** The type a book dragged inside the list carries: a file dropped on the page carries none. */
const DRAG_TYPE = 'application/x-memagent-book';

/** How a book is named in the list: its title and file name, or its file name alone. */
export function bookLabel(doc: Pick<DocumentRecord, 'name' | 'title'>): string {
  return doc.title && doc.title !== doc.name ? `${doc.title} (${doc.name})` : doc.name;
}

/**
 * The books a read takes, in the order it reads them. Each can be moved up or
 * down with its buttons, or dragged to another place, and removed; after a
 * move the keyboard stays on the book moved, and a live line says where it is.
 */
export function BookOrder({ books, onChange }: Props) {
  const { t } = useTranslation();
  const [said, setSaid] = useState('');
  const [over, setOver] = useState<number | null>(null);
  const dragged = useRef<number | null>(null);
  const list = useRef<HTMLOListElement>(null);
  // After a move the focus follows the book; after a removal it goes to the book now in its place.
  const focusNext = useRef<{ id: string; prefer: 'up' | 'down' } | null>(null);

  useEffect(() => {
    const next = focusNext.current;
    if (!next) return;
    focusNext.current = null;
    const item = list.current?.querySelector<HTMLLIElement>(`li[data-id="${CSS.escape(next.id)}"]`);
    const buttons = [...(item?.querySelectorAll<HTMLButtonElement>('button') ?? [])];
    const [up, down, remove] = buttons;
    const choice = (next.prefer === 'up' ? [up, down] : [down, up]).find((b) => b && !b.disabled) ?? remove;
    choice?.focus();
  });

  const move = (from: number, to: number, prefer: 'up' | 'down') => {
    if (to < 0 || to >= books.length || from === to) return;
    const next = [...books];
    const [book] = next.splice(from, 1);
    next.splice(to, 0, book!);
    focusNext.current = { id: book!.id, prefer };
    setSaid(t('sets.moved', { name: bookLabel(book!), n: to + 1, count: books.length }));
    onChange(next);
  };

  const remove = (i: number) => {
    const next = books.filter((_, j) => j !== i);
    const neighbour = next[i] ?? next[i - 1];
    if (neighbour) focusNext.current = { id: neighbour.id, prefer: 'down' };
    setSaid(t('sets.removed', { name: bookLabel(books[i]!) }));
    onChange(next);
  };

  const ours = (e: DragEvent) => e.dataTransfer.types.includes(DRAG_TYPE);

  return (
    <div className="book-order">
      <ol ref={list} aria-label={t('sets.list')}>
        {books.map((doc, i) => {
          const name = bookLabel(doc);
          return (
            <li
              key={doc.id}
              data-id={doc.id}
              aria-label={t('sets.item', { n: i + 1, count: books.length, name })}
              className={over === i ? 'drop-here' : undefined}
              draggable
              onDragStart={(e) => {
                dragged.current = i;
                e.dataTransfer.effectAllowed = 'move';
                e.dataTransfer.setData(DRAG_TYPE, String(i));
              }}
              onDragOver={(e) => {
                if (!ours(e)) return;
                // A book moved inside the list, not a file dropped on the page.
                e.preventDefault();
                e.stopPropagation();
                e.dataTransfer.dropEffect = 'move';
                setOver(i);
              }}
              onDragLeave={() => setOver((o) => (o === i ? null : o))}
              onDrop={(e) => {
                if (!ours(e)) return;
                e.preventDefault();
                e.stopPropagation();
                setOver(null);
                const from = dragged.current ?? Number(e.dataTransfer.getData(DRAG_TYPE));
                dragged.current = null;
                move(from, i, from < i ? 'down' : 'up');
              }}
              onDragEnd={() => {
                dragged.current = null;
                setOver(null);
              }}
            >
              <span className="book-place" aria-hidden="true">
                {i + 1}.
              </span>
              <span className="book-name">
                {name} <span className="hint">· {formatTokens(doc)}</span>
              </span>
              <span className="book-buttons">
                <button type="button" aria-label={t('sets.moveUp', { name })} disabled={i === 0} onClick={() => move(i, i - 1, 'up')}>
                  {t('sets.up')}
                </button>
                <button type="button" aria-label={t('sets.moveDown', { name })} disabled={i === books.length - 1} onClick={() => move(i, i + 1, 'down')}>
                  {t('sets.down')}
                </button>
                <button type="button" aria-label={t('sets.remove', { name })} onClick={() => remove(i)}>
                  {t('sets.removeShort')}
                </button>
              </span>
            </li>
          );
        })}
      </ol>
      <p className="hint">{t('sets.dragHint')}</p>
      <p className="visually-hidden" aria-live="polite">
        {said}
      </p>
    </div>
  );
}
