import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { fnCallSystem } from '../../src/core/infmem/fncall-system';
import { INFMEM_FILES, type InfmemFileSpec, readFnCallFile, readInfmemFile } from '../../src/core/infmem/official-files';
import { sha256Hex } from '../../src/core/prompt-sets';
import { loadQwenTokenizer } from '../../src/engines/qwen-tokenizer';

// Stand-ins written for the tests in the shape of InfMem's and Qwen-Agent's pinned files, with sentences of our own.
export const INFMEM_STANDIN_PATH = fileURLToPath(new URL('../fixtures/infmem/infmem.py', import.meta.url));
export const FNCALL_STANDIN_PATH = fileURLToPath(new URL('../fixtures/infmem/qwen_fncall_prompt.py', import.meta.url));
export const INFMEM_STANDIN = readFileSync(INFMEM_STANDIN_PATH);
export const FNCALL_STANDIN = readFileSync(FNCALL_STANDIN_PATH);
/** The Python rendition of the official requests the tests compare with. */
export const INFMEM_REFERENCE = readFileSync(new URL('./infmem_reference.py', import.meta.url), 'utf8');

/** The pinned specs with the stand-ins' own hashes and sizes put in their place, as a test passes them. */
export async function infmemStandinSpecs(): Promise<{ infmem: InfmemFileSpec; fncall: InfmemFileSpec }> {
  return {
    infmem: { ...INFMEM_FILES.infmem, sha256: await sha256Hex(INFMEM_STANDIN), bytes: INFMEM_STANDIN.length },
    fncall: { ...INFMEM_FILES.fncall, sha256: await sha256Hex(FNCALL_STANDIN), bytes: FNCALL_STANDIN.length },
  };
}

/** The stand-ins read as the app reads the pinned files: templates and the planner's system message. */
export async function standinPrompts() {
  const specs = await infmemStandinSpecs();
  const templates = await readInfmemFile(INFMEM_STANDIN, specs.infmem);
  const fncall = await readFnCallFile(FNCALL_STANDIN, specs.fncall);
  return { templates, toolSystem: fnCallSystem(fncall, [templates.tool]), specs };
}

/** Which request a prompt is, by the stand-ins' own words, and whether it opens a thought (1) or continues one (2). */
export function standinKind(prompt: string): { role: 'planner' | 'writer' | 'final'; stage: 1 | 2 } {
  const role = prompt.includes('Stand-in planner.') ? 'planner' : prompt.includes('Stand-in writer') ? 'writer' : 'final';
  return { role, stage: prompt.endsWith('<|im_start|>assistant\n') ? 1 : 2 };
}

/** A model that thinks a moment, votes to stop before every chunk, writes `memory` and replies `final`. */
export function stoppingScript(memory: string, final: string): (prompt: string) => string {
  return (prompt) => {
    const { role, stage } = standinKind(prompt);
    if (stage === 1) return '<think>\nThinking it over.</think>';
    if (role === 'planner') return 'STOP';
    return role === 'writer' ? memory : final;
  };
}

/** The app's Qwen tokenizer and the stand-ins' prompts with their specs, as a model's InfMem tests load them once. */
export async function standinsAndTokenizer() {
  const prompts = await standinPrompts();
  return { tok: await loadQwenTokenizer(), prompts, specs: prompts.specs };
}
