import type { IngestRequest } from '../agent/protocol';
import { tellQuietly } from '../core/failures';
import type { IngestProgress } from '../ingest/ingest';

/** Passes progress on when the stage changes or it moved by a percent: a 100 MB import sends ~100 messages, not millions. */
export function throttle(listener: IngestRequest['onProgress']): (p: IngestProgress) => void {
  let last: IngestProgress | null = null;
  const tell = tellQuietly(listener);
  return (p) => {
    if (!listener) return;
    if (last && last.stage === p.stage && p.fraction - last.fraction < 0.01 && p.fraction < 1) return;
    last = p;
    tell(p);
  };
}
