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
  step?: number;
  placeholder?: string;
  disabled?: boolean;
  /** The field as typed, and as a number (NaN while it is empty). */
  onChange(text: string, value: number): void;
}

export function NumberField({ label, value, min, step, placeholder, disabled, onChange }: NumberFieldProps) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="number"
        min={min}
        step={step}
        disabled={disabled}
        value={value}
        placeholder={placeholder}
        onChange={(e) => onChange(e.target.value, e.target.valueAsNumber)}
      />
    </div>
  );
}

/** What went wrong, read out as soon as it shows; nothing while nothing did. */
export function ErrorAlert({ message }: { message: string | null | undefined }) {
  if (!message) return null;
  return (
    <p role="alert" className="error">
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
