/** What the tests of sets of books share: a two-hop question whose facts are in the first and third of three books. */
import type { RunRequest } from '../src/agent/protocol';
import type { RunRecord, Store } from '../src/storage/db';
import { corpusText } from './helpers';
import { until } from './runner-setup';

export const QUESTION = 'Where was the warden of Gull Rock born?';
// Two hops: who is warden of Gull Rock (the first book), and where that person was born (the third).
export const FACT_1 = 'The warden of Gull Rock is Orrin Vale.';
export const FACT_2 = 'Orrin Vale was born in Port Meridian, far from Gull Rock.';

export const bytes = (s: string) => new TextEncoder().encode(s) as Uint8Array<ArrayBuffer>;

/** harbour.txt (the first fact), weather.txt (none) and families.txt (the second fact): 12 KB each of Frankenstein around them. */
export function threeTexts(): { name: string; text: string }[] {
  const filler = corpusText('frankenstein.txt').slice(90_000, 96_000);
  return [
    { name: 'harbour.txt', text: `${filler}\n\n${FACT_1}\n\n${filler}` },
    { name: 'weather.txt', text: filler.slice(2000) + filler.slice(0, 2000) },
    { name: 'families.txt', text: `${filler.slice(3000)}\n\n${FACT_2}\n\n${filler.slice(0, 3000)}` },
  ];
}

/** A read of the books `ids` as one set, in that order, with the extractive engine. */
export function setRequest(ids: readonly string[], extra: Partial<RunRequest> = {}): RunRequest {
  return { documentId: ids[0]!, documentIds: ids, question: QUESTION, engineId: 'extractive', chunkTokens: 600, memoryTokens: 256, ...extra };
}

/** The run once it is done (or has waited `tries` checks for it). */
export async function whenDone(store: Store, runId: string, tries?: number): Promise<RunRecord> {
  await until(async () => (await store.getRun(runId))?.status === 'done', tries);
  return (await store.getRun(runId))!;
}
