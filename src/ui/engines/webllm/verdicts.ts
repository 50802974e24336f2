import { useEffect, useState } from 'react';
import { store } from '../../data';
import type { RecordedVerdict } from './speculation';

/**
 * Every speculation check kept with the measured speeds, read again whenever
 * `again` changes (the model list refreshed after a load, a run opened).
 */
export function useSpeculationVerdicts(again: unknown): readonly RecordedVerdict[] {
  const [verdicts, setVerdicts] = useState<readonly RecordedVerdict[]>([]);
  useEffect(() => {
    let alive = true;
    void store
      .then((s) => s.listSpeeds())
      .then(
        (speeds) => speeds.flatMap((s) => (s.speculation ? [{ modelId: s.modelId, adapter: s.adapter, speculation: s.speculation }] : [])),
        // The verdicts are a note beside the model: a storage error leaves them out rather than break the page.
        () => [],
      )
      .then((found) => alive && setVerdicts(found));
    return () => {
      alive = false;
    };
  }, [again]);
  return verdicts;
}
