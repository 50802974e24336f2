import { useId } from 'react';
import type { EngineInfo } from '../engines/engine';

interface Props {
  engines: readonly EngineInfo[];
  value: string;
  onChange(engineId: string): void;
}

/** The "Engine" combobox, as the Read and Evaluate forms show it. */
export function EngineSelect({ engines, value, onChange }: Props) {
  const id = useId();
  return (
    <>
      <label htmlFor={id}>Engine</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        {engines.map((e) => (
          <option key={e.id} value={e.id}>
            {e.label}
          </option>
        ))}
      </select>
    </>
  );
}
