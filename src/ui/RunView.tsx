import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import type { DocumentRecord, RevisionRecord, RunRecord } from './data';
import { estimateRemaining, formatRemaining, formatRunBooks } from './format';
import { SetBooks } from './SetBooks';
import { FollowUp } from './FollowUp';
import { Inspector } from './inspector/Inspector';
import { EmptyMemory } from './inspector/RevisionDetail';
import { isEmptyStart } from '../core/prompts';
import type { CitedMark } from './inspector/RevisionDetail';
import { RunSettings } from './inspector/RunSettings';
import { InfmemModelNotice } from './InfmemModelNotice';
import { SpeculationNotice } from './engines/webllm/SpeculationNotice';
import { RunDelete } from './RunDelete';
import { ProgressBar } from './ProgressBar';
import { JobControls, JobStopAlert } from './JobControls';
import type { SourceTarget } from './Sources';
import { type ReadAction, ReadQuestions } from './ReadQuestions';
import { RunAnswer } from './RunAnswer';

interface Props {
  run: RunRecord;
  runs: readonly RunRecord[];
  revisions: readonly RevisionRecord[];
  /** The run's book as stored here, or null when this browser does not have it (an imported run). */
  book: DocumentRecord | null;
  /** A run over a set: each of its books as stored here, in reading order, null where this browser lacks it. */
  books: readonly (DocumentRecord | null)[];
  writing: { index: number; text: string } | null;
  selected: number | null;
  onSelect(index: number): void;
  onPause(): unknown;
  onResume(): unknown;
  onCancel(): unknown;
  /** Deletes the run with its revisions (offered when it is not reading). */
  onDelete?(): void;
  /** Opens the inspector at a source's revision with its sentence marked. */
  onOpenSource(target: SourceTarget): void;
  /** Shows another question of the same read, at one of its answer's sources where given. */
  onShowQuestion(runId: string, source?: SourceTarget): void;
  /** Pauses, resumes, cancels or deletes every question of the read in view. */
  onReadControl(action: ReadAction, readId: string): unknown;
  /** The sentence marked in the section pane, and a count that moves focus to it each time a source is opened. */
  cited: CitedMark | null;
}

/** The run's heading: its question, books and sizes, its books in a set, its settings. */
function RunHead({
  run,
  revisions,
  books,
  total,
  counting,
}: {
  run: RunRecord;
  revisions: readonly RevisionRecord[];
  books: readonly (DocumentRecord | null)[];
  total: number;
  counting: boolean;
}) {
  const { t } = useTranslation();
  return (
    <header className="run-head">
      <h2 tabIndex={-1}>{run.question}</h2>
      <p className="hint">
        {formatRunBooks(run)} ·{' '}
        {t(run.skim ? 'run.factsSkimmed' : counting ? 'readPage.factsAbout' : 'run.facts', {
          chunks: total,
          from: run.skim?.totalChunks ?? 0,
          chunkTokens: run.settings.chunkTokens,
          memoryTokens: run.settings.memoryTokens,
        })}
      </p>
      <SetBooks run={run} books={books} />
      <RunSettings run={run} revisions={revisions} />
      <SpeculationNotice run={run} />
      <InfmemModelNotice run={run} />
    </header>
  );
}

/** How far the run has read, its status and the time left. */
function RunProgressRow({ run, read, total, counting, eta }: { run: RunRecord; read: number; total: number; counting: boolean; eta: number | null }) {
  const { t } = useTranslation();
  return (
    <div className="progress-row">
      <ProgressBar label={t('run.progress')} value={read} max={total} text={t(counting ? 'run.progressTextAbout' : 'run.progressText', { read, total })} />
      <p className="status" aria-live="polite">
        {t(`run.status.${run.status}`)} · {t(counting ? 'run.chunksCounting' : 'run.chunks', { read, total })}
        {run.status === 'running' && read === total ? ` · ${t('run.writingAnswerShort')}` : ''}
        {run.infmem?.stopped ? ` · ${t('infmem.stoppedShort', { n: run.infmem.stopped.index + 1 })}` : ''}
        {eta !== null ? ` · ${formatRemaining(eta)}` : ''}
      </p>
    </div>
  );
}

/** The memory (or the answer) being written now. */
function WritingPane({ writing, total }: { writing: { index: number; text: string }; total: number }) {
  const { t } = useTranslation();
  return (
    <section aria-label={t('run.writingRegion')} className="pane writing">
      <h3>{writing.index < total ? t('run.writingChunk', { n: writing.index + 1 }) : t('run.writingAnswer')}</h3>
      {isEmptyStart(writing.text) ? (
        <EmptyMemory />
      ) : (
        <pre tabIndex={0} className="text">
          {writing.text}
        </pre>
      )}
    </section>
  );
}

/** "Show its revisions" pressed: focus goes to the revisions of that question once they are in view. */
function useRevisionsFocus(runId: string, onShowQuestion: Props['onShowQuestion']) {
  const heading = useRef<HTMLHeadingElement>(null);
  const focusRevisions = useRef(false);
  useEffect(() => {
    if (!focusRevisions.current) return;
    focusRevisions.current = false;
    heading.current?.focus();
  }, [runId]);
  const showQuestion = (id: string, source?: SourceTarget) => {
    focusRevisions.current = source === undefined && id !== runId;
    onShowQuestion(id, source);
  };
  return [heading, showQuestion] as const;
}

/** One run: its progress, controls, revisions and answer. */
export function RunView({
  run,
  runs,
  revisions,
  book,
  books,
  writing,
  selected,
  onSelect,
  onPause,
  onResume,
  onCancel,
  onDelete,
  onOpenSource,
  onShowQuestion,
  onReadControl,
  cited,
}: Props) {
  const { t } = useTranslation();
  // A read of several questions shows each answer in its list; the question in view is marked there, not repeated below.
  const several = run.readId !== undefined && runs.filter((r) => r.readId === run.readId).length > 1;
  const [revisionsHeading, showQuestion] = useRevisionsFocus(run.id, onShowQuestion);
  // While the book is still being cut, the count is an estimate.
  const counting = run.chunking !== undefined;
  const total = counting ? Math.max(run.chunking!.estimate, run.chunks.length) : run.chunks.length;
  const read = revisions.length;
  // The steps left, and one more that writes the answer.
  const eta =
    run.status === 'running'
      ? estimateRemaining(
          revisions.map((r) => r.committedAt),
          total - read + 1,
        )
      : null;

  return (
    <section className="run" aria-label={t('run.region')}>
      <RunHead run={run} revisions={revisions} books={books} total={total} counting={counting} />
      <ReadQuestions run={run} runs={runs} onShow={showQuestion} onRead={onReadControl} />
      <RunProgressRow run={run} read={read} total={total} counting={counting} eta={eta} />
      <JobControls status={run.status} onPause={onPause} onResume={onResume} onCancel={onCancel}>
        {run.status !== 'running' && onDelete && <RunDelete key={run.id} run={run} revisions={read} onDelete={onDelete} />}
      </JobControls>
      <JobStopAlert
        status={run.status}
        error={run.error}
        paused={t('run.pausedBy', { error: run.error })}
        failed={t('run.stopped', { error: run.error, chunk: run.nextChunk + 1 })}
      />
      {run.status === 'running' && writing && <WritingPane writing={writing} total={total} />}
      <RunAnswer run={run} several={several} total={total} onOpenSource={onOpenSource} />
      {run.status === 'done' && <FollowUp key={run.id} run={run} total={total} onOpenSource={onOpenSource} />}
      {several && (
        <h3 ref={revisionsHeading} tabIndex={-1} className="revisions-of">
          {t('readQuestions.revisionsOf', { question: run.question })}
        </h3>
      )}
      <Inspector
        run={run}
        runs={runs}
        revisions={revisions}
        book={book}
        books={books}
        selected={selected}
        onSelect={onSelect}
        cited={cited}
        onOpenSource={onOpenSource}
      />
    </section>
  );
}
