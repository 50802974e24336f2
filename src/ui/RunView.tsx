import type { DocumentRecord, RevisionRecord, RunRecord } from '../storage/db';
import { estimateRemaining, formatRemaining } from './format';
import { FollowUp } from './FollowUp';
import { Inspector } from './inspector/Inspector';
import { RunSettings } from './inspector/RunSettings';
import { RunDelete } from './RunDelete';

interface Props {
  run: RunRecord;
  runs: readonly RunRecord[];
  revisions: readonly RevisionRecord[];
  /** The run's book as stored here, or null when this browser does not have it (an imported run). */
  book: DocumentRecord | null;
  writing: { index: number; text: string } | null;
  selected: number | null;
  onSelect(index: number): void;
  onPause(): void;
  onResume(): void;
  onCancel(): void;
  /** Deletes the run with its revisions (offered when it is not reading). */
  onDelete?(): void;
}

const STATUS_TEXT: Record<RunRecord['status'], string> = {
  running: 'Reading',
  paused: 'Paused',
  cancelled: 'Cancelled',
  done: 'Done',
  failed: 'Stopped by an error',
};

/** One run: its progress, controls, revisions and answer. */
export function RunView({ run, runs, revisions, book, writing, selected, onSelect, onPause, onResume, onCancel, onDelete }: Props) {
  // While the book is still being cut, the count is an estimate.
  const counting = run.chunking !== undefined;
  const total = counting ? Math.max(run.chunking!.estimate, run.chunks.length) : run.chunks.length;
  const read = revisions.length;
  // The steps left, and one more that writes the answer.
  const eta = run.status === 'running' ? estimateRemaining(revisions.map((r) => r.committedAt), total - read + 1) : null;

  return (
    <section className="run" aria-label="Run">
      <header className="run-head">
        <h2>{run.question}</h2>
        <p className="hint">
          {run.documentName} · {total} chunks{run.skim ? ` (skimmed from ${run.skim.totalChunks})` : ''} of up to {run.settings.chunkTokens} tokens · memory {run.settings.memoryTokens}{' '}
          tokens
        </p>
        <RunSettings run={run} />
      </header>
      <div className="progress-row">
        <div
          role="progressbar"
          aria-label="Reading progress"
          aria-valuemin={0}
          aria-valuemax={total}
          aria-valuenow={read}
          aria-valuetext={`${read} of ${counting ? 'about ' : ''}${total} chunks read`}
          className="progress"
        >
          <div className="progress-fill" style={{ width: `${total ? (100 * read) / total : 0}%` }} />
        </div>
        <p className="status" aria-live="polite">
          {STATUS_TEXT[run.status]} · {read} of {counting ? `about ${total}` : total} chunks{counting ? ' (still counting)' : ''}
          {run.status === 'running' && read === total ? ' · writing the answer' : ''}
          {eta !== null ? ` · ${formatRemaining(eta)}` : ''}
        </p>
      </div>
      <div className="controls">
        {run.status === 'running' && (
          <button type="button" onClick={onPause}>
            Pause
          </button>
        )}
        {(run.status === 'paused' || run.status === 'cancelled' || run.status === 'failed') && (
          <button type="button" onClick={onResume}>
            Resume
          </button>
        )}
        {(run.status === 'running' || run.status === 'paused') && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
        {run.status !== 'running' && onDelete && <RunDelete key={run.id} run={run} revisions={read} onDelete={onDelete} />}
      </div>
      {run.status === 'paused' && run.error && (
        <p role="alert" className="error">
          The run is paused: {run.error}
        </p>
      )}
      {run.status === 'failed' && (
        <p role="alert" className="error">
          The run stopped: {run.error} Fix the cause, then press Resume to continue from chunk {run.nextChunk + 1}.
        </p>
      )}
      {run.status === 'running' && writing && (
        <section aria-label="Writing memory" className="pane writing">
          <h3>{writing.index < total ? `Writing the memory for chunk ${writing.index + 1}` : 'Writing the answer'}</h3>
          <pre tabIndex={0} className="text">{writing.text}</pre>
        </section>
      )}
      <section aria-label="Answer" className="answer">
        <h3>Answer</h3>
        {run.answer ? (
          <p className="answer-text">{run.answer}</p>
        ) : run.answer !== undefined ? (
          <>
            <p className="hint">
              The reply gives no answer in the form {run.prompts?.label ?? 'the prompts'} ask for
              {run.prompts?.answerStyle === 'recurrent' ? ' ("the answer is …")' : run.prompts?.answerStyle === 'recurrent-boxed' ? ' (\\boxed{…})' : ''}; the
              paper scores such a reply as no answer. The whole reply:
            </p>
            <pre className="text">{run.reply ?? ''}</pre>
          </>
        ) : (
          <p className="hint">The answer is written from the final memory after the last chunk.</p>
        )}
      </section>
      {run.status === 'done' && <FollowUp key={run.id} run={run} />}
      <Inspector run={run} runs={runs} revisions={revisions} book={book} selected={selected} onSelect={onSelect} />
    </section>
  );
}
