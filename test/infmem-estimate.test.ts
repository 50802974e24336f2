import { describe, expect, it } from 'vitest';
import { DEFAULT_TEMPLATES } from '../src/core/prompts';
import type { RunRecord } from '../src/storage/schema';
import { estimatedSettings, infmemNote, infmemStops } from '../src/ui/infmem-estimate';
import { DEFAULT_SETTINGS } from '../src/ui/settings';

const SETTINGS = { chunkTokens: 5000, requestedChunkTokens: 5000, memoryTokens: 1024, temperature: 0.7, topP: 0.95, contextTokens: 8192 };
const METHOD = { kind: 'infmem', earlyStop: 3, thinking: true } as const;
const chunks = (n: number) => Array.from({ length: n }, (_, i) => ({ start: i * 10, end: i * 10 + 10, tokens: 5000 }));

function run(over: Partial<RunRecord> = {}): RunRecord {
  return {
    id: crypto.randomUUID(),
    documentId: 'book',
    documentName: 'book.txt',
    question: 'Who?',
    engineId: 'extractive',
    settings: SETTINGS,
    templates: { ...DEFAULT_TEMPLATES },
    method: METHOD,
    chunks: chunks(20),
    status: 'done',
    nextChunk: 3,
    memory: '',
    createdAt: 1000,
    updatedAt: 1000,
    ...over,
  };
}

describe('how early past InfMem reads stopped, for the estimate', () => {
  it('averages the share of their chunks finished InfMem reads with this engine and model read before they stopped', () => {
    const runs = [
      run({ infmem: { votes: 3, history: [], stopped: { index: 4, votes: 3 } } }), // 20%
      run({ infmem: { votes: 0, history: [] }, nextChunk: 20 }), // read every chunk: 100%
      // Not counted: a MemAgent read, one still reading, another engine, another model.
      run({ method: undefined, infmem: undefined }),
      run({ status: 'running', infmem: { votes: 3, history: [], stopped: { index: 1, votes: 3 } } }),
      run({ engineId: 'openai', infmem: { votes: 3, history: [], stopped: { index: 1, votes: 3 } } }),
      run({ engineConfig: { model: 'other' }, infmem: { votes: 3, history: [], stopped: { index: 1, votes: 3 } } }),
    ];
    expect(infmemStops(runs, 'extractive', '')).toEqual({ count: 2, share: 60 });
    expect(infmemStops([], 'extractive', '')).toBeNull();
  });

  it('says an InfMem read may stop early, and how early past reads stopped; nothing for MemAgent', () => {
    const infmem = { ...DEFAULT_SETTINGS, method: 'infmem' as const };
    const past = [run({ infmem: { votes: 3, history: [], stopped: { index: 3, votes: 3 } } })];
    expect(infmemNote(infmem, [], 'extractive', '')).toMatch(/^InfMem may stop early, before the last chunk: the time above is for reading the whole book\.$/);
    expect(infmemNote(infmem, past, 'extractive', '')).toMatch(/The last InfMem read with this engine and model stopped after 15% of its chunks\.$/);
    expect(infmemNote(DEFAULT_SETTINGS, past, 'extractive', '')).toBe('');
    // The estimate counts InfMem's own sizes, whatever the form's MemAgent fields hold.
    expect(estimatedSettings({ ...infmem, chunkTokens: 800, skim: true })).toMatchObject({ chunkTokens: 5000, memoryTokens: 1024, skim: false });
  });
});
