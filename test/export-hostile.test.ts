import { describe, expect, it } from 'vitest';
import { checkExportSize, EXPORT_FORMAT, EXPORT_VERSION, ImportError, MAX_EXPORT_BYTES, parseExport } from '../src/storage/export';

/** A small valid export: two revisions of a three-chunk run. */
function validExport(): Record<string, unknown> {
  const revision = (index: number) => ({
    index,
    memory: `memory ${index}`,
    memoryTokens: 2,
    wordsAdded: 2,
    wordsRemoved: 0,
    start: index * 10,
    end: index * 10 + 10,
    chunkTokens: 3,
    promptTokens: 30,
    completionTokens: 2,
    ms: 5,
    finishReason: 'stop',
    retries: 0,
    committedAt: 1_700_000_000_000 + index,
  });
  return {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    run: {
      id: 'run-1',
      documentId: 'doc',
      documentName: 'book.txt',
      question: 'Who?',
      engineId: 'extractive',
      settings: { requestedChunkTokens: 10, chunkTokens: 10, memoryTokens: 20, contextTokens: 100, temperature: 0.7, topP: 0.95 },
      templates: { update: '{problem}{memory}{section}', final: '{problem}{memory}' },
      chunks: [0, 1, 2].map((i) => ({ start: i * 10, end: i * 10 + 10, tokens: 3 })),
      status: 'done',
      nextChunk: 2,
      memory: 'memory 1',
      createdAt: 1,
      updatedAt: 2,
    },
    revisions: [revision(0), revision(1)],
  };
}

function refusal(json: string): string {
  try {
    parseExport(json);
  } catch (e) {
    expect(e).toBeInstanceOf(ImportError);
    return (e as Error).message;
  }
  throw new Error('the export was accepted');
}

describe('hostile run exports are refused before anything is stored', () => {
  it('accepts the valid export the other cases start from', () => {
    expect(parseExport(JSON.stringify(validExport())).revisions).toHaveLength(2);
  });

  it('refuses a file too large to be an export, before reading it', () => {
    expect(() => checkExportSize(MAX_EXPORT_BYTES + 1)).toThrow(/larger than any run export/);
    expect(() => checkExportSize(10 * 1024 * 1024)).not.toThrow();
  });

  it('refuses JSON nested a million levels deep wherever it sits, without overflowing the stack', () => {
    const deep = `${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`;
    expect(refusal(deep)).toMatch(/not a valid memagent-web run export/);
    const inRevisions = JSON.stringify(validExport()).replace(/"revisions":\[/, `"revisions":[${deep},`);
    expect(refusal(inRevisions)).toMatch(/at revisions\.0/);
    const inMemory = JSON.stringify(validExport()).replace('"memory":"memory 0"', `"memory":${deep}`);
    expect(refusal(inMemory)).toMatch(/at revisions\.0\.memory/);
  });

  it('drops keys it does not know, __proto__ included, and pollutes no prototype', () => {
    const hostile = JSON.stringify(validExport())
      .replace('"run":{', '"run":{"__proto__":{"polluted":"run"},"constructor":{"prototype":{"polluted":"ctor"}},"extra":"<script>",')
      .replace('"index":0,', '"index":0,"__proto__":{"polluted":"revision"},');
    const parsed = parseExport(hostile);
    expect(({} as { polluted?: string }).polluted).toBeUndefined();
    expect(Object.keys(parsed.run)).not.toContain('extra');
    expect(Object.prototype.hasOwnProperty.call(parsed.run, '__proto__')).toBe(false);
    expect((parsed.run as unknown as { polluted?: string }).polluted).toBeUndefined();
    expect((parsed.revisions[0] as unknown as { polluted?: string }).polluted).toBeUndefined();
  });

  it('refuses revisions that claim more than the run has, or skip an index', () => {
    const tooMany = validExport();
    (tooMany.revisions as unknown[]).push(...[2, 3].map((index) => ({ ...(tooMany.revisions as Record<string, unknown>[])[0], index })));
    expect(refusal(JSON.stringify(tooMany))).toMatch(/at most one per chunk/);
  });
});
