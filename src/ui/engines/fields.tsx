import { useId } from 'react';

/*
 * The parts every engine's settings form is made of, written once: a labelled
 * number field, the alert of what went wrong, and the choices kept between
 * visits in localStorage.
 */

interface NumberFieldProps {
  label: string;
  value: string;
  min: number;
  max?: number;
  step?: number;
  placeholder?: string;
  disabled?: boolean;
  /** A line under the field that says what it does; the field is described by it. */
  hint?: string;
  /** What is wrong with the value as typed: shown under the field, which is then marked invalid. */
  error?: string | null;
  /** The field as typed, and as a number (NaN while it is empty). */
  onChange(text: string, value: number): void;
}

export function NumberField({ label, value, min, max, step, placeholder, disabled, hint, error, onChange }: NumberFieldProps) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [error ? errorId : '', hint ? hintId : ''].filter(Boolean).join(' ');
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="number"
        inputMode={step !== undefined && Number.isInteger(step) ? 'numeric' : undefined}
        min={min}
        max={max}
        step={step}
        disabled={disabled}
        value={value}
        placeholder={placeholder}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy || undefined}
        onChange={(e) => onChange(e.target.value, e.target.valueAsNumber)}
      />
      {hint && (
        <p className="hint" id={hintId}>
          {hint}
        </p>
      )}
      <ErrorAlert message={error} id={errorId} />
    </div>
  );
}

/** What went wrong, read out as soon as it shows; nothing while nothing did. */
export function ErrorAlert({ message, id }: { message: string | null | undefined; id?: string }) {
  if (!message) return null;
  return (
    <p role="alert" className="error" id={id}>
      {message}
    </p>
  );
}

/** The choices an engine's form kept under `key`, or `fallback` where none (or none readable) are kept. */
export function loadChoices<T>(key: string, fallback: T): T {
  try {
    return (JSON.parse(localStorage.getItem(key) ?? 'null') as T | null) ?? fallback;
  } catch {
    return fallback;
  }
}

/** Keeps an engine form's choices for the next visit. */
export function keepChoices(key: string, value: unknown): void {
  localStorage.setItem(key, JSON.stringify(value));
}
