import { useVirtualizer } from '@tanstack/react-virtual';
import { type KeyboardEvent, useEffect, useLayoutEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { type Anchor, sectionPlace } from '../../core/anchors';
import { describeReason, type ReadReason } from '../../core/read-reason';
import type { RevisionRecord } from '../data';
import { formatNumber } from '../format';
import { i18n } from '../i18n';
import { describeWriting } from './writing';
import { planEntry } from './infmem-plan';

interface Props {
  revisions: readonly RevisionRecord[];
  total: number;
  /** Characters in the book, to say how far through it a chunk ends. */
  bookLength: number;
  /** Chapters, headings and pages of the book, to say where each chunk starts. */
  anchors: readonly Anchor[];
  /** Why each chunk is read, by chunk index (a skim's runs); absent entries say nothing. */
  reasons?: readonly (ReadReason | undefined)[];
  selected: number | null;
  marked: ReadonlySet<number>;
  onSelect(index: number): void;
  /** An InfMem read's votes to stop in a row that end it: each entry says its plan. */
  earlyStop?: number;
}

/** A first guess at an entry's height; each rendered entry is measured, so one whose text wraps takes the room it needs. */
const ROW = 44;

/** What an entry of the timeline says about its revision besides the revision itself. */
export interface RevisionContext {
  /** Revisions (chunks) in the run. */
  total: number;
  /** Characters in the book, to say how far through it the chunk ends. */
  bookLength: number;
  anchors?: readonly Anchor[];
  /** Why the chunk was read (a skim's runs). */
  reason?: ReadReason | undefined;
  /** An InfMem read's early stop: the entry says the plan before the chunk. */
  earlyStop?: number | undefined;
}

export function describeRevision(r: RevisionRecord, { total, bookLength, anchors = [], reason, earlyStop }: RevisionContext): string {
  const place = sectionPlace(anchors, r.start, r.end);
  const k = r.index + 1;
  const through = bookLength ? Math.round((100 * r.end) / bookLength) : 0;
  const speed = r.ms > 0 ? Math.round(r.completionTokens / (r.ms / 1000)) : 0;
  const flags = [r.finishReason === 'length' ? i18n.t('timeline.truncatedLong') : '', r.retries ? i18n.t('timeline.retriedTimes', { n: r.retries }) : '']
    .filter(Boolean)
    .join(', ');
  // Engines that measure their own speeds (WebLLM) split reading the prompt from writing the memory.
  const measured =
    r.decodeTokensPerSecond !== undefined
      ? i18n.t('timeline.measured', { read: Math.round(r.prefillTokensPerSecond ?? 0), first: formatNumber(r.timeToFirstTokenSeconds ?? 0, 1) })
      : '';
  return (
    i18n.t('timeline.entry', {
      k,
      total,
      through,
      place: place ? `, ${place}` : '',
      memory: r.memoryTokens,
      time: formatMs(r.ms),
      speed: r.decodeTokensPerSecond !== undefined ? Math.round(r.decodeTokensPerSecond) : speed,
      measured,
      // Engines that write speculatively (WebLLM) say in how many passes, and how many drafted tokens they kept.
      writing: r.writing ? i18n.t('timeline.writingEntry', { writing: describeWriting(r.writing) }) : '',
      flags: flags ? `, ${flags}` : '',
      reason: reason ? i18n.t('timeline.because', { reason: describeReason(reason) }) : '',
    }) + planEntry(r, earlyStop)
  );
}

function formatMs(ms: number): string {
  return ms < 1000 ? i18n.t('timeline.ms', { n: Math.round(ms) }) : i18n.t('timeline.s', { n: formatNumber(ms / 1000, 1) });
}

/**
 * One entry per memory revision, virtualised so that thousands of revisions
 * cost what a screenful does; entries are measured as they render, so none
 * overlaps the next however its text wraps. The list is one Tab stop; arrow
 * keys, j/k, Home and End move the selection (and focus) inside it.
 */
export function Timeline({ revisions, total, bookLength, anchors, reasons, selected, marked, onSelect, earlyStop }: Props) {
  // Entries are worded in the interface's language: a switch redraws them.
  useTranslation();
  const scroller = useRef<HTMLDivElement>(null);
  // eslint-disable-next-line react-hooks/incompatible-library -- the app is not built with React Compiler, and nothing here memoizes the virtualizer's functions
  const virtualizer = useVirtualizer({
    count: revisions.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW,
    overscan: 8,
  });

  // The selected entry is scrolled to once it is in the list (a link's &rev= names it before it is read), and kept in
  // view as entries grow on being measured (a chapter's name comes after the first draw) until the person scrolls.
  const listed = selected !== null && selected < revisions.length;
  const totalSize = virtualizer.getTotalSize();
  const keepInView = useRef(true);
  useEffect(() => {
    keepInView.current = true;
  }, [selected]);
  useEffect(() => {
    if (selected !== null && listed && keepInView.current) virtualizer.scrollToIndex(selected, { align: 'auto' });
  }, [selected, listed, totalSize, virtualizer]);
  const scrolledByHand = () => {
    keepInView.current = false;
  };

  // A list that loses its size (an ancestor collapsed, a window shrunk to nothing) loses its scroll
  // position and measures its entries squeezed: when it has room again, draw the selected entry anew.
  const selectedNow = useRef(selected);
  // Before the browser lays out and reports sizes, so the observer below always sees the selection drawn.
  useLayoutEffect(() => {
    selectedNow.current = selected;
  }, [selected]);
  useEffect(() => {
    const element = scroller.current;
    if (!element) return;
    let collapsed = false;
    const observer = new ResizeObserver(() => {
      if (element.clientWidth === 0 || element.clientHeight === 0) collapsed = true;
      else if (collapsed) {
        collapsed = false;
        if (selectedNow.current !== null) virtualizer.scrollToIndex(selectedNow.current, { align: 'auto' });
      }
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [virtualizer]);

  const onKeyDown = (e: KeyboardEvent) => {
    if (revisions.length === 0) return;
    const last = revisions.length - 1;
    const current = selected ?? last;
    const next =
      e.key === 'ArrowDown' || e.key === 'j'
        ? Math.min(last, current + 1)
        : e.key === 'ArrowUp' || e.key === 'k'
          ? Math.max(0, current - 1)
          : e.key === 'Home'
            ? 0
            : e.key === 'End'
              ? last
              : null;
    if (next === null) return scrolledByHand();
    e.preventDefault();
    onSelect(next);
    // Keep keyboard focus on the entry that is now selected, once it is rendered.
    requestAnimationFrame(() => scroller.current?.querySelector<HTMLButtonElement>(`[data-index="${next}"] button`)?.focus());
  };

  // One Tab stop for the whole list (the arrows move inside it): the selected entry, else the last; where that one is
  // scrolled out of the drawn entries, the first drawn one.
  const items = virtualizer.getVirtualItems();
  const wantedStop = selected !== null && listed ? selected : revisions.length - 1;
  const tabStop = items.some((i) => i.index === wantedStop) ? wantedStop : (items[0]?.index ?? -1);

  return (
    <div className="timeline" ref={scroller} onKeyDown={onKeyDown} onWheel={scrolledByHand} onTouchMove={scrolledByHand} onPointerDown={scrolledByHand}>
      <ol aria-label={i18n.t('timeline.list')} className="revision-list" style={{ height: virtualizer.getTotalSize() }}>
        {items.map((item) => {
          const r = revisions[item.index]!;
          const place = sectionPlace(anchors, r.start, r.end);
          const reason = reasons?.[r.index];
          return (
            <li
              key={r.index}
              ref={virtualizer.measureElement}
              data-index={item.index}
              aria-label={describeRevision(r, { total, bookLength, anchors, reason, earlyStop })}
              aria-setsize={total}
              aria-posinset={r.index + 1}
              className={marked.has(r.index) ? 'marked' : undefined}
              style={{ transform: `translateY(${item.start}px)` }}
            >
              <button
                type="button"
                tabIndex={item.index === tabStop ? 0 : -1}
                aria-current={selected === item.index ? 'true' : undefined}
                onClick={() => onSelect(item.index)}
              >
                <span className="rev-k">
                  {i18n.t('timeline.revision', { n: r.index + 1 })}
                  {marked.has(r.index) && <span className="badge"> {i18n.t('timeline.match')}</span>}
                  {reason && <span className="rev-reason"> · {describeReason(reason)}</span>}
                  {r.plan && <span className="rev-reason">{planEntry(r, earlyStop)}</span>}
                </span>
                <span className="rev-meta">
                  {bookLength ? Math.round((100 * r.end) / bookLength) : 0}%{place ? ` · ${place}` : ''} ·{' '}
                  <span className="rev-tok">{i18n.t('timeline.tok', { n: r.memoryTokens })}</span> · {formatMs(r.ms)}
                  {r.writing && ` · ${describeWriting(r.writing)}`}
                  {r.finishReason === 'length' && ` · ${i18n.t('timeline.truncated')}`}
                  {r.retries > 0 && ` · ${i18n.t('timeline.retried')}`}
                </span>
              </button>
            </li>
          );
        })}
      </ol>
    </div>
  );
}
