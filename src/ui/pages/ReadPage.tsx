import type { ReactNode, Ref } from 'react';
import { Page } from './Page';

interface Props {
  active: boolean;
  form: ReactNode;
  error: ReactNode;
  /** The run in view, or null before the first read. */
  run: ReactNode;
  runRef: Ref<HTMLDivElement>;
}

/** The Read form beside the run it started (side by side on a wide screen, one under the other on a narrow one). */
export function ReadPage({ active, form, error, run, runRef }: Props) {
  return (
    <Page place="read" active={active} className="read-page">
      <div className="read-side">
        <header className="page-head">
          <h1 tabIndex={-1}>Read a book</h1>
          <p className="hint">Reads it chunk by chunk, keeping notes in a fixed-size memory, then answers from the notes.</p>
        </header>
        {form}
        {error}
      </div>
      <div className="read-main" ref={runRef} tabIndex={-1}>
        {run ?? <p className="empty">Drop a book anywhere on the page, ask a question and press Read. Earlier runs are in the Library.</p>}
      </div>
    </Page>
  );
}
