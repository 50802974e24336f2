import type { RunRecord } from '../storage/db';
import './questions.css';

/** A run's progress in the list of runs: every run of several questions shows how far it has read. */
export function RunProgress({ run }: { run: RunRecord }) {
  const counting = run.chunking !== undefined;
  const total = counting ? Math.max(run.chunking!.estimate, run.chunks.length) : run.chunks.length;
  const read = Math.min(run.nextChunk, total);
  return (
    <div
      role="progressbar"
      aria-label={`Progress: ${run.question}`}
      aria-valuemin={0}
      aria-valuemax={total}
      aria-valuenow={read}
      aria-valuetext={`${read} of ${counting ? 'about ' : ''}${total} chunks read, ${run.status}`}
      className="run-progress"
    >
      <div style={{ width: `${total ? (100 * read) / total : 0}%` }} />
    </div>
  );
}
