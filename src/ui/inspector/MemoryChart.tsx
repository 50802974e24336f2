import { useTranslation } from 'react-i18next';
import type { RevisionRecord } from '../data';

interface Props {
  revisions: readonly RevisionRecord[];
  memoryCap: number;
  selected: number | null;
  onSelect(index: number): void;
}

const W = 600;
const H = 120;

/** Memory size (tokens, against the cap) and how much each chunk changed it (words added + removed). */
export function MemoryChart({ revisions, memoryCap, selected, onSelect }: Props) {
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
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label={t('inspector.chart', { n })} onClick={pick}>
        <polyline points={size.join(' ')} className="line-size" fill="none" vectorEffect="non-scaling-stroke" />
        <polyline points={change.join(' ')} className="line-change" fill="none" vectorEffect="non-scaling-stroke" />
        {selected !== null && <line x1={x(selected)} x2={x(selected)} y1={0} y2={H} className="cursor" vectorEffect="non-scaling-stroke" />}
      </svg>
      <figcaption className="hint">
        <span className="key-size">■</span> {t('inspector.chartSize', { cap: memoryCap })} · <span className="key-change">■</span>{' '}
        {t('inspector.chartChange', { max: maxChange })}
      </figcaption>
    </figure>
  );
}
