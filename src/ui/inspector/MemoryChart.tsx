import { useTranslation } from 'react-i18next';
import type { RevisionRecord } from '../data';
import '../sets.css';

interface Props {
  revisions: readonly RevisionRecord[];
  memoryCap: number;
  selected: number | null;
  onSelect(index: number): void;
  /** A run over a set: the revision at which each book begins to be read, with its title. */
  bookStarts?: readonly { index: number; title: string }[];
}

/** Book starts named on the chart itself; past this many, only marked. */
const NAMED_BOOKS = 12;

const W = 600;
const H = 120;

/** Memory size (tokens, against the cap) and how much each chunk changed it (words added + removed); in a set, where each book starts. */
export function MemoryChart({ revisions, memoryCap, selected, onSelect, bookStarts = [] }: Props) {
  const { t } = useTranslation();
  if (revisions.length === 0) return null;
  const n = revisions.length;
  const x = (i: number) => (n === 1 ? W / 2 : (i / (n - 1)) * W);
  const maxChange = Math.max(1, ...revisions.map((r) => r.wordsAdded + r.wordsRemoved));
  const size = revisions.map((r, i) => `${x(i).toFixed(1)},${(H - (Math.min(r.memoryTokens, memoryCap) / memoryCap) * H).toFixed(1)}`);
  const change = revisions.map((r, i) => `${x(i).toFixed(1)},${(H - ((r.wordsAdded + r.wordsRemoved) / maxChange) * H).toFixed(1)}`);
  const pick = (e: React.MouseEvent<SVGSVGElement>) => {
    const box = e.currentTarget.getBoundingClientRect();
    onSelect(Math.max(0, Math.min(n - 1, Math.round(((e.clientX - box.left) / box.width) * (n - 1)))));
  };
  // Revision indexes are chunk indexes; the chart is drawn by position in the list of revisions.
  const position = new Map(revisions.map((r, i) => [r.index, i]));
  const starts = bookStarts.flatMap((b) => (position.has(b.index) ? [{ ...b, x: x(position.get(b.index)!) }] : []));
  const named = starts.length > 1 && starts.length <= NAMED_BOOKS;
  const books =
    starts.length > 1
      ? named
        ? t('sets.chartBooks', { list: starts.map((b) => `${b.title} (${b.index + 1})`).join(', ') })
        : t('sets.chartBooksMany', { count: starts.length })
      : '';
  return (
    <figure className="chart">
      <svg
        viewBox={`0 0 ${W} ${H}`}
        preserveAspectRatio="none"
        role="img"
        aria-label={[t('inspector.chart', { n }), books].filter(Boolean).join('; ')}
        onClick={pick}
      >
        {starts.length > 1 &&
          starts.map((b) => <line key={b.index} x1={b.x} x2={b.x} y1={0} y2={H} className="book-start" vectorEffect="non-scaling-stroke" />)}
        <polyline points={size.join(' ')} className="line-size" fill="none" vectorEffect="non-scaling-stroke" />
        <polyline points={change.join(' ')} className="line-change" fill="none" vectorEffect="non-scaling-stroke" />
        {selected !== null && <line x1={x(selected)} x2={x(selected)} y1={0} y2={H} className="cursor" vectorEffect="non-scaling-stroke" />}
      </svg>
      {named && (
        <div className="chart-books" aria-hidden="true">
          {starts.map((b) => (
            <span key={b.index} style={{ left: `${(100 * b.x) / W}%` }}>
              {b.title}
            </span>
          ))}
        </div>
      )}
      <figcaption className="hint">
        <span className="key-size">■</span> {t('inspector.chartSize', { cap: memoryCap })} · <span className="key-change">■</span>{' '}
        {t('inspector.chartChange', { max: maxChange })}
      </figcaption>
    </figure>
  );
}
