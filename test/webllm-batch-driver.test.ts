import { describe, expect, it } from 'vitest';
import { type BatchPipeline, prepareSequence } from '../src/engines/webllm/driver/driver-batch';
import type { Mlc } from '../src/engines/webllm/driver/mlc';
import { WEBLLM_0_2_79, WEBLLM_0_2_86 } from '../src/engines/webllm/versions';

const STOP_TOKEN = 9;

/** WebLLM's conversation in small: reset in place, and a reply finished only where a message waits for it. */
class StandInConversation {
  messages: string[] = [];
  finished: string | undefined;
  reset() {
    this.messages = [];
  }
  finishReply(message: string) {
    if (this.messages.length === 0) throw new Error('Message error should not be 0');
    this.finished = message;
  }
}

/**
 * A stand-in for WebLLM's pipeline in the shape its prefill has: the reply
 * state reset, the request's message appended to its conversation, the
 * prompt read by getInputData (sync in 0.2.79, awaited in 0.2.86), then a
 * forward; and processNextToken with WebLLM's stop rules.
 */
class StandInPipeline {
  outputIds: number[] = [];
  outputMessage = '';
  stopTriggered = false;
  finishReason: string | undefined;
  appearedTokensFreq = new Map<number, number>();
  tokenLogprobArray: unknown[] = [];
  conversation = new StandInConversation();
  stopStr = ['<end>'];
  stopTokens = [STOP_TOKEN];
  filledKVCacheLength = 0;
  contextWindowSize = 100;
  config = { temperature: 0.7, top_p: 0.9 };
  forwards = 0;
  /** The seeds WebLLM set on it, in order: the last is the one later requests sample with. */
  seeds: number[] = [];
  setSeed(seed: number) {
    this.seeds.push(seed);
  }
  constructor(private readonly async = false) {}
  resetChat() {
    this.conversation.reset(); // in place, as WebLLM's does
    this.filledKVCacheLength = 0;
  }
  getInputData(): unknown {
    const encoded = this.conversation.messages.map((m) => [...m].map((c) => c.charCodeAt(0) % 8));
    const length = encoded.flat().length;
    const out = [encoded, length];
    // WebLLM checks the window where it encodes the prompt.
    if (length > this.contextWindowSize) throw Object.assign(new Error('too long'), { name: 'ContextWindowSizeExceededError' });
    return this.async ? Promise.resolve(out) : out;
  }
  async prefillStep(text: string) {
    this.outputIds = [];
    this.outputMessage = '';
    this.stopTriggered = false;
    this.appearedTokensFreq.clear();
    this.conversation.messages.push(text, '<assistant>');
    await this.getInputData();
    this.forwards++;
  }
  processNextToken(token: number, genConfig: { max_tokens?: number }) {
    if (this.stopTriggered) throw new Error('Cannot call process when it is stoppped');
    if (this.stopTokens.includes(token)) [this.stopTriggered, this.finishReason] = [true, 'stop'];
    else this.outputIds.push(token);
    this.outputMessage = this.outputIds.map((t) => String.fromCharCode(97 + t)).join('');
    if (this.outputIds.length >= (genConfig.max_tokens ?? Infinity)) [this.stopTriggered, this.finishReason] = [true, 'length'];
    if (this.filledKVCacheLength === this.contextWindowSize) [this.stopTriggered, this.finishReason] = [true, 'length'];
    if (this.stopTriggered) this.conversation.finishReply(this.outputMessage);
  }
}

/** A stand-in for MLCEngine: a non-streamed request builds its genConfig and goes through its own `prefill`, then decodes. */
class StandInEngine {
  decoded = 0;
  constructor(readonly pipeline: StandInPipeline) {}
  async prefill(input: { messages: { content: string }[] }, pipeline: StandInPipeline, _chatConfig: unknown, _genConfig: unknown) {
    pipeline.resetChat();
    await pipeline.prefillStep(input.messages.at(-1)!.content);
  }
  chat = {
    completions: {
      create: async (request: { messages: { content: string }[]; max_tokens: number; temperature?: number; stream?: boolean; seed?: number }) => {
        // As WebLLM's non-streamed request: the seed is set first and reset only after the reply is written.
        if (request.seed !== undefined) this.pipeline.setSeed(request.seed);
        await this.prefill(request, this.pipeline, {}, { max_tokens: request.max_tokens, temperature: request.temperature });
        this.decoded++;
        return { choices: [] };
      },
    },
  };
  reload = async () => undefined;
  unload = async () => undefined;
  interruptGenerate = () => undefined;
}

function standIn(async = false) {
  const pipeline = new StandInPipeline(async);
  const engine = new StandInEngine(pipeline);
  return { pipeline, engine, mlc: engine as unknown as Mlc, batch: pipeline as unknown as BatchPipeline };
}

const body = (content: string, maxTokens = 3) => ({ messages: [{ role: 'user', content }], max_tokens: maxTokens, temperature: 0 });

describe('a batch request’s prompt and reply state, through WebLLM’s own code', () => {
  it('reads the prompt WebLLM’s own request encodes, running no forward, and puts WebLLM’s methods back', async () => {
    for (const [async, version] of [
      [false, WEBLLM_0_2_79],
      [true, WEBLLM_0_2_86],
    ] as const) {
      const { pipeline, engine, mlc, batch } = standIn(async);
      const prepared = await prepareSequence(version, mlc, batch, body('abc'));
      expect(prepared.prompt).toEqual([...'abc', ...'<assistant>'].map((c) => c.charCodeAt(0) % 8));
      expect(pipeline.forwards).toBe(0);
      expect(engine.decoded).toBe(0);
      expect(Object.hasOwn(engine, 'prefill')).toBe(false);
      expect(Object.hasOwn(pipeline, 'getInputData')).toBe(false);
    }
  });

  it('passes WebLLM’s refusal of a request through', async () => {
    const { mlc, batch } = standIn();
    await expect(prepareSequence(WEBLLM_0_2_79, mlc, batch, body('x'.repeat(200)))).rejects.toMatchObject({ name: 'ContextWindowSizeExceededError' });
  });

  it('leaves no request’s seed on WebLLM’s pipeline, whether its prompt is read or refused', async () => {
    const { pipeline, mlc, batch } = standIn();
    await prepareSequence(WEBLLM_0_2_79, mlc, batch, { ...body('abc'), seed: 42 });
    await expect(prepareSequence(WEBLLM_0_2_79, mlc, batch, { ...body('x'.repeat(200)), seed: 43 })).rejects.toThrow('too long');
    expect(pipeline.seeds).not.toContain(42);
    expect(pipeline.seeds).not.toContain(43);
  });

  it('keeps each request’s reply state its own through WebLLM’s token step: its tokens, text, stop and sampling', async () => {
    const { pipeline, mlc, batch } = standIn();
    const a = (await prepareSequence(WEBLLM_0_2_79, mlc, batch, body('first', 3))).writer;
    const b = (await prepareSequence(WEBLLM_0_2_79, mlc, batch, body('second', 5))).writer;
    expect(a.commit(1, 6)).toBe(true);
    expect(b.commit(2, 7)).toBe(true);
    expect(b.commit(STOP_TOKEN, 8)).toBe(false);
    expect(a.commit(3, 7)).toBe(true);
    expect([a.written(), a.text(), a.stopped()]).toEqual([[1, 3], 'bd', false]);
    expect([b.written(), b.text(), b.stopped(), b.finishReason()]).toEqual([[2], 'c', true, 'stop']);
    expect(a.commit(4, 8)).toBe(false);
    expect(a.finishReason()).toBe('length');
    // The request's temperature (0) over the model config's 0.7: greedy.
    const row = Float32Array.from([0, 3, 1]);
    expect(a.distribution(row)).toMatchObject({ ids: [1] });
    expect(pipeline.filledKVCacheLength).toBe(8);
  });
});
