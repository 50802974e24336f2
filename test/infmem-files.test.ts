/**
 * InfMem's pinned files read as Python reads them: the stand-ins (same shape,
 * sentences of our own) give the same templates, tool schema, closing words
 * and system message that Python computes from them; a file with another hash
 * or without a part is refused whole.
 */
import { describe, expect, it } from 'vitest';
import { InfmemFileError, INFMEM_FILES, infmemFileUrl, readFnCallFile, readInfmemFile } from '../src/core/infmem/official-files';
import { pyJsonDumps } from '../src/core/infmem/py-values';
import { hasPython, runPython } from './support/python';
import {
  FNCALL_STANDIN,
  FNCALL_STANDIN_PATH,
  INFMEM_REFERENCE,
  INFMEM_STANDIN,
  INFMEM_STANDIN_PATH,
  infmemStandinSpecs,
  standinPrompts,
} from './support/infmem-standins';

describe('the pinned InfMem files', () => {
  it.runIf(hasPython)('are read into the constants, schema, closing words and system message Python computes from them', async () => {
    const { templates, toolSystem } = await standinPrompts();
    // The reference with no chunks: only the final request is sent, and the file's parts come back.
    const python = runPython<{ tool_system: string; close: string; requests: { prompt: string }[] }>(INFMEM_REFERENCE, {
      infmem: INFMEM_STANDIN_PATH,
      fncall: FNCALL_STANDIN_PATH,
      question: 'q',
      chunks: [],
      units: [],
      replies: ['t', 'a'],
      early_stop: 3,
      thinking: true,
    });
    expect(toolSystem).toBe(python.tool_system);
    expect(templates.thinkClose).toBe(python.close);
    const consts = runPython<Record<string, string>>(
      `import ast,json,sys
src=open(json.load(sys.stdin),encoding='utf-8').read()
print(json.dumps({n.targets[0].id: n.value.value for n in ast.parse(src).body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)}))`,
      INFMEM_STANDIN_PATH,
    );
    expect([templates.planner, templates.writer, templates.final, templates.initialMemory]).toEqual([
      consts.TEMPLATE_CALL_OR_ANSWER,
      consts.TEMPLATE_RETREIVE_RECURRENT,
      consts.TEMPLATE_FINAL,
      consts.NO_MEMORY,
    ]);
    expect(pyJsonDumps(templates.tool.get('parameters')!)).toContain('"minimum": 3, "maximum": 20, "default": 8');
  });

  it('refuse a file whose SHA-256 is not the pinned one, saying which hash and where to get it', async () => {
    await expect(readInfmemFile(INFMEM_STANDIN)).rejects.toThrow(InfmemFileError);
    await expect(readInfmemFile(INFMEM_STANDIN)).rejects.toThrow(new RegExp(`not ${INFMEM_FILES.infmem.sha256}.*${infmemFileUrl(INFMEM_FILES.infmem)}`));
    await expect(readFnCallFile(FNCALL_STANDIN)).rejects.toThrow(/SHA-256/);
  });

  it('refuse a file that lacks a part, naming it', async () => {
    const specs = await infmemStandinSpecs();
    const cut = new TextEncoder().encode(INFMEM_STANDIN.toString('utf8').replace(/think_part = think_part\.rstrip\(\) \+ \\\n\s+"[^"]*"/, 'pass'));
    const { sha256Hex } = await import('../src/core/prompt-sets');
    const spec = { ...specs.infmem, sha256: await sha256Hex(cut), bytes: cut.length };
    await expect(readInfmemFile(cut, spec)).rejects.toThrow(/closing words for a thought in call_llm_text/);
  });

  it('name the raw files at the pinned commits', () => {
    expect(infmemFileUrl(INFMEM_FILES.infmem)).toBe(
      'https://raw.githubusercontent.com/UCMP13753/InfMem/4f4de32311bfff8e8847664705301076b6d61453/taskutils/memory_eval/utils/infmem.py',
    );
    expect(infmemFileUrl(INFMEM_FILES.fncall, 'http://mirror.test/qa/')).toBe('http://mirror.test/qa/qwen_agent/llm/fncall_prompts/qwen_fncall_prompt.py');
  });
});
