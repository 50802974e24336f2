import { useEffect, useState } from 'react';
import { estimateRun, skimmedChunks, type StepSample } from '../core/estimate';
import { DEFAULT_SKIM } from '../core/skim';
import type { DocumentRecord } from '../storage/db';
import { onRunEvent, store } from './client';
import { formatDuration } from './format';
import type { ReadSettings } from './settings';

interface Props {
  document: DocumentRecord | null;
  engineId: string;
  settings: ReadSettings;
}

// The prompt around a chunk: template, question and memory; an upper bound is honest enough here.
const PROMPT_OVERHEAD = 250;

/** Expected time of the next read, from this engine's measured speed, before it starts. */
export function ReadEstimate({ document, engineId, settings }: Props) {
  const [samples, setSamples] = useState<StepSample[] | null>(null);

  useEffect(() => {
    let alive = true;
    const measure = async () => {
      const steps = await (await store).recentSteps(engineId);
      if (alive) setSamples(steps);
    };
    void measure();
    // A run that ends adds measurements.
    const unsubscribe = onRunEvent((e) => {
      if (e.type === 'status' && e.status !== 'running') void measure();
    });
    return () => {
      alive = false;
      unsubscribe();
    };
  }, [engineId]);

  if (!document || samples === null || !(settings.chunkTokens > 0)) return null;
  const chunks = Math.ceil(document.tokens / settings.chunkTokens);
  const promptTokens = Math.min(settings.chunkTokens, document.tokens) + settings.memoryTokens + PROMPT_OVERHEAD;
  const full = estimateRun(chunks, promptTokens, samples);
  if (!full) {
    return (
      <p className="estimate" role="note" aria-label="Estimate">
        About {chunks} chunks. This engine's speed is not measured yet: the time left shows once two chunks are read.
      </p>
    );
  }
  const per = `${formatDuration(full.msPerChunk)} each, measured on this engine`;
  if (!settings.skim) {
    return (
      <p className="estimate" role="note" aria-label="Estimate">
        About {chunks} chunks: expected {formatDuration(full.totalMs)} ({per}).
      </p>
    );
  }
  const read = skimmedChunks(chunks, settings.skimPercent / 100, DEFAULT_SKIM.neighbours);
  const skim = estimateRun(read, promptTokens, samples)!;
  return (
    <p className="estimate" role="note" aria-label="Estimate">
      Skim reads at most {read} of about {chunks} chunks: expected {formatDuration(skim.totalMs)} instead of{' '}
      {formatDuration(full.totalMs)}, saving about {formatDuration(full.totalMs - skim.totalMs)} ({per}).
    </p>
  );
}
