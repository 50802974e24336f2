import { useId } from 'react';
import { ErrorAlert } from './engines/fields';
import { fieldProblem, type NumericSetting, type ReadFormSettings } from './settings';

export interface Props {
  settings: ReadFormSettings;
  onChange(change: Partial<ReadFormSettings>): void;
}

/**
 * One labelled number input for a setting; a value Read would refuse (an emptied field holds NaN) is said beside it as it is typed.
 * Its range is the one Read checks, and its step 1 for whole numbers, else any: the browser silently refuses to submit a value off
 * the step, and Read takes every value in range (a chunk of 150 tokens, a memory of 1,000, top p 0.92).
 */
export function NumberField(props: Props & { name: NumericSetting; label: string; min: number; max: number; whole: boolean }) {
  const id = useId();
  const errorId = `${id}-error`;
  const value = props.settings[props.name];
  const problem = fieldProblem(props.settings, props.name);
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <input
        id={id}
        type="number"
        min={props.min}
        max={props.max}
        step={props.whole ? 1 : 'any'}
        value={Number.isNaN(value) ? '' : value}
        aria-invalid={problem ? true : undefined}
        aria-describedby={problem ? errorId : undefined}
        onChange={(e) => props.onChange({ [props.name]: e.target.valueAsNumber })}
      />
      <ErrorAlert message={problem} id={errorId} />
    </div>
  );
}

export function CheckField({ label, checked, onChange }: { label: string; checked: boolean; onChange(checked: boolean): void }) {
  const id = useId();
  return (
    <div className="field check">
      <input id={id} type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} />
      <label htmlFor={id}>{label}</label>
    </div>
  );
}
