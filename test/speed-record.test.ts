import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { modelKey, type SpeedMeasurement } from '../src/core/estimate';
import { engineConfigFor, customEntry } from '../src/engines/webllm/models/models';
import { cpuDevice } from '../src/engines/wllama/models';
import { measureWllama } from '../src/engines/wllama/speed';
import { modelShelf } from '../src/jobs/model-shelf';
import { Store } from '../src/storage/db';
import { LEGACY_SPEEDS_KEY, legacySpeed } from '../src/ui/engines/wllama/legacy-speed';

const GGUF = 'https://hf.example/qwen2.5-0.5b-instruct-q4_k_m.gguf';
const measured: SpeedMeasurement = { prefillTokensPerSecond: 210, decodeTokensPerSecond: 14.5, promptTokens: 180, completionTokens: 32, source: 'reported' };

let store: Store | undefined;
afterEach(() => store?.close());

describe('one speed record for every engine', () => {
  it("keeps a llama.cpp measurement beside WebLLM's, under the key a read's config gives and the threads it ran with", async () => {
    store = await Store.open(`speeds-${Math.random()}`);
    const webllm = modelKey(
      engineConfigFor(customEntry({ id: 'custom:Alpha', label: 'Alpha', modelUrl: 'https://h/a/', libUrl: 'https://h/a.wasm', contextLimit: 32768 })),
    );
    await store.putSpeed({ ...measured, modelId: webllm, adapter: 'acme rdna9', measuredAt: 1 });

    const config = { modelUrl: GGUF, threads: 4, contextTokens: 8192 };
    const record = await measureWllama(modelShelf(Promise.resolve(store)), config, undefined, async () => ({ ...measured, threads: 2 }));
    expect(record).toMatchObject({ ...measured, modelId: GGUF, adapter: cpuDevice(2) });

    // Found again by what the page knows: the config (whatever else it holds) and the thread count.
    expect(await store.getSpeed(modelKey({ modelUrl: GGUF }), cpuDevice(2))).toEqual(record);
    expect(await store.getSpeed(modelKey({ modelUrl: GGUF }), cpuDevice(4))).toBeUndefined();
    expect((await store.listSpeeds()).map((s) => `${s.modelId} on ${s.adapter}`).sort()).toEqual(['custom:Alpha on acme rdna9', `${GGUF} on cpu, 2 threads`]);
  });

  it('keeps nothing when the measurement fails', async () => {
    store = await Store.open(`speeds-${Math.random()}`);
    const failing = async () => {
      throw new Error('The model file could not be read.');
    };
    await expect(measureWllama(modelShelf(Promise.resolve(store)), { modelUrl: GGUF }, undefined, failing)).rejects.toThrow('could not be read');
    expect(await store.listSpeeds()).toEqual([]);
  });
});

describe('speeds an earlier version kept in localStorage', () => {
  const storage = (value: unknown) => ({ getItem: (key: string) => (key === LEGACY_SPEEDS_KEY ? JSON.stringify(value) : null) });

  it('are read for their model and thread count', () => {
    const kept = storage({ [`${GGUF}|2`]: { prefillTokensPerSecond: 200, decodeTokensPerSecond: 12, threads: 2, measured: true } });
    expect(legacySpeed(kept, GGUF, 2)).toEqual({ prefillTokensPerSecond: 200, decodeTokensPerSecond: 12 });
    expect(legacySpeed(kept, GGUF, 4)).toBeUndefined();
    expect(legacySpeed(kept, 'https://hf.example/other.gguf', 2)).toBeUndefined();
  });

  it('are ignored when they are guesses, unreadable or missing', () => {
    expect(
      legacySpeed(storage({ [`${GGUF}|1`]: { prefillTokensPerSecond: 128, decodeTokensPerSecond: 16, threads: 1, measured: false } }), GGUF, 1),
    ).toBeUndefined();
    expect(legacySpeed({ getItem: () => '{not json' }, GGUF, 1)).toBeUndefined();
    expect(legacySpeed({ getItem: () => null }, GGUF, 1)).toBeUndefined();
    expect(legacySpeed(undefined, GGUF, 1)).toBeUndefined();
  });
});
