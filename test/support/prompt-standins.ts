import { readFileSync } from 'node:fs';
import { PROMPT_FILES, type PromptFileSpec, sha256Hex } from '../../src/core/prompt-sets';

// Stand-ins written for the tests in the exact shape of the pinned MemAgent files, with sentences of our own.
export const STANDIN = readFileSync(new URL('../fixtures/prompt-files/recurrent.py', import.meta.url));
export const STANDIN_BOXED = readFileSync(new URL('../fixtures/prompt-files/recurrent_boxed.py', import.meta.url));

/** The pinned specs with the stand-ins' own hashes and sizes put in their place, as a test passes them. */
export async function standinSpecs(): Promise<PromptFileSpec[]> {
  const [paper, boxed] = await Promise.all([sha256Hex(STANDIN), sha256Hex(STANDIN_BOXED)]);
  return PROMPT_FILES.map((s) =>
    s.set === 'memagent' ? { ...s, sha256: paper, bytes: STANDIN.length } : { ...s, sha256: boxed, bytes: STANDIN_BOXED.length },
  );
}
