import { useEffect, useRef, useState } from 'react';

interface Props {
  /** The button's words: "Delete evaluation". */
  label: string;
  /** The group's name while it asks: "Confirm delete evaluation". */
  confirm: string;
  /** What is asked, with what goes and what stays. */
  question: string;
  yes: string;
  keep: string;
  onDelete(): void;
}

/**
 * A Delete button that asks first in place, as the Library asks before a book
 * goes: focus moves to the choice that loses nothing, and back to the Delete
 * button when that is chosen (or Escape is pressed).
 */
export function ConfirmDelete({ label, confirm, question, yes, keep, onDelete }: Props) {
  const [confirming, setConfirming] = useState(false);
  const opener = useRef<HTMLButtonElement>(null);
  const keeper = useRef<HTMLButtonElement>(null);
  const asked = useRef(false);

  useEffect(() => {
    if (confirming) keeper.current?.focus();
    else if (asked.current) opener.current?.focus();
  }, [confirming]);

  if (!confirming) {
    return (
      <button
        ref={opener}
        type="button"
        onClick={() => {
          asked.current = true;
          setConfirming(true);
        }}
      >
        {label}
      </button>
    );
  }
  return (
    <span
      className="controls"
      role="group"
      aria-label={confirm}
      onKeyDown={(e) => {
        if (e.key !== 'Escape') return;
        e.preventDefault();
        setConfirming(false);
      }}
    >
      <span>{question}</span>
      <button type="button" onClick={onDelete}>
        {yes}
      </button>
      <button ref={keeper} type="button" onClick={() => setConfirming(false)}>
        {keep}
      </button>
    </span>
  );
}
