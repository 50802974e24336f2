import type { ReactNode } from 'react';
import type { Place } from '../route';

interface Props {
  place: Place;
  active: boolean;
  /** The page's heading; the Read page places its own. */
  title?: string;
  intro?: string;
  className?: string;
  children: ReactNode;
}

/**
 * One place of the app. Pages stay mounted while another is shown (hidden, so
 * out of the accessibility tree too): a question half typed, an open
 * disclosure or a scrolled list is as it was when the person comes back.
 */
export function Page({ place, active, title, intro, className, children }: Props) {
  return (
    <div className={`page${className ? ` ${className}` : ''}`} data-place={place} hidden={!active}>
      {title && (
        <header className="page-head">
          <h1 tabIndex={-1}>{title}</h1>
          {intro && <p className="hint">{intro}</p>}
        </header>
      )}
      {children}
    </div>
  );
}
