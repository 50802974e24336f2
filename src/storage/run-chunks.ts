import type { ReadReason } from '../core/read-reason';
import type { RunProgress, RunRecord } from './schema';

/**
 * A run is stored without its chunk list (as RunProgress), which lives in
 * runChunks, so that committing a revision reads and writes a few hundred
 * bytes, not a list of thousands of chunks. There the chunks are (start, end,
 * tokens) triples in one typed array: a third of the bytes of a list of
 * objects, copied whole rather than object by object, and small enough to stay
 * inside the database for thousands of chunks.
 */
export interface RunChunksRecord {
  runId: string;
  spans: Uint32Array<ArrayBuffer>;
  /** Why each chunk is read, by position (a skim's runs only; absent on runs stored before reasons were kept). */
  reasons?: (ReadReason | null)[];
}

export function packChunks(runId: string, chunks: RunRecord['chunks']): RunChunksRecord {
  const spans = new Uint32Array(chunks.length * 3);
  chunks.forEach((c, i) => spans.set([c.start, c.end, c.tokens], i * 3));
  const record: RunChunksRecord = { runId, spans };
  if (chunks.some((c) => c.reason)) record.reasons = chunks.map((c) => c.reason ?? null);
  return record;
}

function unpackChunks(record: RunChunksRecord | undefined): RunRecord['chunks'] {
  const spans = record?.spans ?? new Uint32Array(0);
  const chunks: RunRecord['chunks'] = [];
  for (let i = 0; i + 2 < spans.length; i += 3) {
    const reason = record?.reasons?.[i / 3];
    chunks.push({ start: spans[i]!, end: spans[i + 1]!, tokens: spans[i + 2]!, ...(reason ? { reason } : {}) });
  }
  return chunks;
}

export function splitRun(run: RunRecord): [RunProgress, RunChunksRecord] {
  const { chunks, ...stored } = run;
  return [stored, packChunks(run.id, chunks)];
}

export function joinRun(run: RunProgress, chunks: RunChunksRecord | undefined): RunRecord {
  return { ...run, chunks: unpackChunks(chunks) };
}
