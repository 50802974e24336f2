import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import { formatLength } from '../../eval/lengths';
import type { CellSummary } from '../../eval/sweep';
import type { TaskId } from '../../eval/tasks';

const COLOURS = ['#2f6fde', '#d48a00', '#2f9e5a', '#c0392b', '#8e44ad', '#16a085', '#7f8c8d', '#b8860b', '#e84393', '#5f7d9c', '#6ab04c', '#0984e3'];
const W = 560;
const H = 240;
const PAD = { left: 44, right: 16, top: 12, bottom: 30 };
/** Pixels between series that meet at one point; with a dash pattern each, lines that coincide stay told apart. */
const SPREAD = 5;
const DASHES = [undefined, '7 4', '2 3', '10 3 2 3'];

/** Accuracy against document length on a log axis, one line per task, as the paper plots it. */
export function AccuracyChart({ tasks, lengths, cells }: { tasks: readonly TaskId[]; lengths: readonly number[]; cells: readonly CellSummary[] }) {
  const { t } = useTranslation();
  const titleId = useId();
  const sorted = [...lengths].sort((a, b) => a - b);
  const lo = Math.log2(sorted[0] ?? 1);
  const hi = Math.log2(sorted[sorted.length - 1] ?? 1);
  const x = (length: number) => (hi === lo ? (PAD.left + W - PAD.right) / 2 : PAD.left + ((Math.log2(length) - lo) / (hi - lo)) * (W - PAD.left - PAD.right));
  const y = (accuracy: number) => PAD.top + (1 - accuracy) * (H - PAD.top - PAD.bottom);
  const series = tasks.map((task) =>
    sorted
      .map((length) => ({ length, accuracy: cells.find((c) => c.task === task && c.length === length)?.accuracy ?? null }))
      .filter((p): p is { length: number; accuracy: number } => p.accuracy !== null),
  );
  // Series with the same value at the same length would hide each other: each is drawn a little apart from the others there.
  const apart = (i: number, p: { length: number; accuracy: number }) => {
    const same = series.flatMap((points, j) => (points.some((q) => q.length === p.length && q.accuracy === p.accuracy) ? [j] : []));
    return (same.indexOf(i) - (same.length - 1) / 2) * SPREAD;
  };
  const lines = tasks.map((task, i) => ({
    task,
    colour: COLOURS[i % COLOURS.length]!,
    dash: DASHES[i % DASHES.length],
    points: series[i]!.map((p) => ({ ...p, cy: y(p.accuracy) + apart(i, p) })),
  }));

  return (
    <figure className="accuracy-chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={titleId}>
        <title id={titleId}>{t('results.chart')}</title>
        {[0, 0.25, 0.5, 0.75, 1].map((a) => (
          <g key={a}>
            <line className="grid" x1={PAD.left} x2={W - PAD.right} y1={y(a)} y2={y(a)} />
            <text className="tick" x={PAD.left - 6} y={y(a) + 4} textAnchor="end">
              {a * 100}%
            </text>
          </g>
        ))}
        {sorted.map((l) => (
          <text key={l} className="tick" x={x(l)} y={H - PAD.bottom + 16} textAnchor="middle">
            {formatLength(l)}
          </text>
        ))}
        {lines.map((line) => (
          <g key={line.task} stroke={line.colour} fill={line.colour}>
            {line.points.length > 1 && (
              <polyline fill="none" strokeWidth={2} strokeDasharray={line.dash} points={line.points.map((p) => `${x(p.length)},${p.cy}`).join(' ')} />
            )}
            {line.points.map((p) => (
              <circle key={p.length} cx={x(p.length)} cy={p.cy} r={3.5} />
            ))}
          </g>
        ))}
      </svg>
      <figcaption>
        <ul className="legend">
          {lines.map((line) => (
            <li key={line.task}>
              <span className="swatch" style={{ background: line.colour }} aria-hidden="true" /> {t(`tasks.${line.task}.name`)}
            </li>
          ))}
        </ul>
      </figcaption>
    </figure>
  );
}
