import { useState } from 'react';
import type { RunRecord } from '../storage/db';
import './durability.css';

interface Props {
  run: RunRecord;
  /** Revisions stored for the run. */
  revisions: number;
  onDelete(): void;
}

/** "Delete run", asking once before the run, its revisions and memories go; its book stays. */
export function RunDelete({ run, revisions, onDelete }: Props) {
  const [confirming, setConfirming] = useState(false);
  if (!confirming) {
    return (
      <button type="button" onClick={() => setConfirming(true)}>
        Delete run
      </button>
    );
  }
  return (
    <div role="group" aria-label="Confirm delete run" className="run-confirm">
      <span>
        Delete this run{revisions ? ` and its ${revisions} revision${revisions === 1 ? '' : 's'}` : ''}? {run.documentName} stays in
        the Library.
      </span>
      <button
        type="button"
        onClick={() => {
          setConfirming(false);
          onDelete();
        }}
      >
        Yes, delete run
      </button>
      <button type="button" onClick={() => setConfirming(false)}>
        Keep run
      </button>
    </div>
  );
}
