/**
 * A progress bar as assistive technology reads it: a name, a value out of a
 * maximum and that value in words. `fill` (0–1) is what is drawn, where it
 * runs ahead of the counted value (a sample part-way read).
 */
export function ProgressBar({
  label,
  value,
  max,
  text,
  fill = max ? value / max : 0,
  className = 'progress',
}: {
  label: string;
  value: number;
  max: number;
  text: string;
  fill?: number;
  className?: string;
}) {
  return (
    <div role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={max} aria-valuenow={value} aria-valuetext={text} className={className}>
      <div className="progress-fill" style={{ width: `${100 * fill}%` }} />
    </div>
  );
}
