import { type MouseEvent, useLayoutEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { type Anchor, sourcePlace } from '../../core/anchors';
import type { RetrievedPassage, RevisionRecord, RunRecord } from '../data';
import { type SourceTarget, sourceHref } from '../Sources';
import './infmem.css';
import { citedPassage, passageTarget, planWords } from './infmem-plan';
import type { CitedMark } from './RevisionDetail';

interface Props {
  run: RunRecord;
  revision: RevisionRecord;
  /** Chunks read: a passage in one of them opens there. */
  read: number;
  /** Where a finished read stopped: a passage in a chunk from there on opens in that chunk, never read. */
  stoppedAt?: number | undefined;
  anchors: readonly Anchor[];
  onOpenSource(target: SourceTarget): void;
  /** A source's sentence opened at this step: where the chunk does not hold it, the passage that does is marked and focused. */
  cited?: CitedMark | null;
}

/** One retrieved passage: its place, its first words, and a link that opens it marked in its chunk, read or (the read having stopped before it) never read. */
function Passage({
  runId,
  passage: p,
  k,
  read,
  stoppedAt,
  anchors,
  onOpen,
  cited,
  sentence,
}: {
  runId: string;
  passage: RetrievedPassage;
  k: number;
  read: number;
  stoppedAt: number | undefined;
  anchors: readonly Anchor[];
  onOpen(target: SourceTarget): void;
  /** This passage holds the sentence a source opened (its count moves focus here each time). */
  cited: number | null;
  /** The sentence a source opened, which this passage's link then opens marked. */
  sentence: CitedMark | null;
}) {
  const { t } = useTranslation();
  const item = useRef<HTMLLIElement>(null);
  useLayoutEffect(() => {
    if (cited === null) return;
    item.current?.scrollIntoView({ block: 'nearest' });
    item.current?.focus({ preventScroll: true });
  }, [cited]);
  const place = sourcePlace(anchors, p.start, p);
  const target: SourceTarget = passageTarget(p, sentence);
  const open = (e: MouseEvent) => {
    // A plain click opens it here; a click that asks for a new tab or window goes by the address.
    if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    onOpen(target);
  };
  const unread = p.chunk >= read;
  // A chunk not read yet has nothing to open until it is read; one the finished read never read opens as it is in the book.
  const openable = !unread || (stoppedAt !== undefined && p.chunk >= stoppedAt);
  return (
    <li ref={item} tabIndex={cited === null ? undefined : -1} className={cited === null ? undefined : 'cited'}>
      {cited !== null && <strong>{t('infmem.holdsCited')} </strong>}
      <span className="source-place">
        {t(unread ? 'infmem.passageUnread' : 'infmem.passage', { k, chunk: p.chunk + 1, place: place ? ` · ${place}` : '' })}
      </span>
      <blockquote>{p.excerpt.trim()}…</blockquote>
      {openable && (
        <a href={sourceHref(runId, target)} onClick={open}>
          {t('infmem.openPassage', { k })}
        </a>
      )}
    </li>
  );
}

/** An InfMem step: the plan before the chunk (the searches, or a vote to stop) and the passages the writer was given with it. */
export function InfmemStep({ run, revision, read, stoppedAt, anchors, onOpenSource, cited }: Props) {
  const { t } = useTranslation();
  const plan = revision.plan;
  if (!plan) return null;
  const limit = run.method?.earlyStop ?? 0;
  const holding = citedPassage(revision, cited);
  return (
    <section aria-label={t('infmem.plan')} className="pane infmem-step">
      <h3>{t('infmem.plan')}</h3>
      <p>{planWords(plan, limit)}</p>
      <h4>{t('infmem.retrieved')}</h4>
      {plan.retrieved.length ? (
        <ol aria-label={t('infmem.retrieved')} className="sources">
          {plan.retrieved.map((p, i) => (
            <Passage
              key={`${p.start}-${i}`}
              runId={run.id}
              passage={p}
              k={i + 1}
              read={read}
              stoppedAt={stoppedAt}
              anchors={anchors}
              onOpen={onOpenSource}
              cited={i === holding ? (cited?.focus ?? 0) : null}
              sentence={i === holding ? (cited ?? null) : null}
            />
          ))}
        </ol>
      ) : (
        <p className="hint">{t('infmem.noRetrieved')}</p>
      )}
    </section>
  );
}

/** Where an InfMem read stopped, with its votes, and the chunks it never read; or that it read them all. */
export function InfmemStop({ run, total }: { run: RunRecord; total: number }) {
  const { t } = useTranslation();
  if (!run.method || run.status !== 'done') return null;
  const stopped = run.infmem?.stopped;
  return (
    <p className="hint infmem-stop">
      {stopped ? t('infmem.stopped', { n: stopped.index + 1, total, votes: stopped.votes }) : t('infmem.stoppedAtEnd', { limit: run.method.earlyStop })}
    </p>
  );
}
