import { describe, expect, it } from 'vitest';
import { type DownloadCache, deleteStoredModel, groupDownloads, listStoredModels } from '../src/engines/wllama/files';

const HF = 'https://huggingface.co/Qwen/Qwen2.5-7B-Instruct-GGUF/resolve/main';

function entry(url: string, size: number, originalSize = size) {
  return { name: `hash_${url.split('/').pop()}`, size, metadata: { originalURL: url, originalSize } };
}

/** wllama's cache as its CacheManager behaves: list every file, delete those a predicate picks. */
function fakeCache(entries: ReturnType<typeof entry>[]): DownloadCache & { entries: typeof entries } {
  return {
    entries,
    list: async () => [...entries],
    deleteMany: async (pick) => {
      for (const e of [...entries]) if (pick(e)) entries.splice(entries.indexOf(e), 1);
    },
  };
}

describe('stored llama.cpp models', () => {
  it('shows a split model as one model named by its first part, with the size of all parts', () => {
    const [model, ...rest] = groupDownloads([
      entry(`${HF}/qwen2.5-7b-instruct-q4_k_m-00001-of-00002.gguf`, 3_990_000_000),
      entry(`${HF}/qwen2.5-7b-instruct-q4_k_m-00002-of-00002.gguf`, 690_000_000),
    ]);
    expect(rest).toEqual([]);
    expect(model).toEqual({
      id: `download:${HF}/qwen2.5-7b-instruct-q4_k_m-00001-of-00002.gguf`,
      model: `${HF}/qwen2.5-7b-instruct-q4_k_m-00001-of-00002.gguf`,
      name: 'qwen2.5-7b-instruct-q4_k_m-00001-of-00002.gguf (2 parts)',
      origin: 'huggingface.co',
      bytes: 4_680_000_000,
      complete: true,
    });
  });

  it('marks a download cut short, or a split model with a part missing, as not complete', () => {
    const models = groupDownloads([
      entry('http://127.0.0.1:4198/tiny.gguf', 1_000, 1_750_000),
      entry(`${HF}/big-00001-of-00003.gguf`, 10),
      entry(`${HF}/big-00003-of-00003.gguf`, 10),
    ]);
    expect(models.map((m) => [m.name, m.complete])).toEqual([
      ['tiny.gguf', false],
      ['big-00001-of-00003.gguf (3 parts)', false],
    ]);
  });

  it('deletes every part of the model asked for and nothing else', async () => {
    const cache = fakeCache([
      entry(`${HF}/big-00001-of-00002.gguf`, 10),
      entry(`${HF}/big-00002-of-00002.gguf`, 10),
      entry('http://127.0.0.1:4198/tiny.gguf', 5),
    ]);
    await deleteStoredModel(`download:${HF}/big-00001-of-00002.gguf`, cache);
    expect((await listStoredModels(cache)).map((m) => m.name)).toEqual(['tiny.gguf']);
    await expect(deleteStoredModel('nothing', cache)).rejects.toThrow('No stored model');
  });
});
