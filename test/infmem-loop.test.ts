/**
 * The InfMem loop's requests, byte for byte what the official evaluation
 * sends for the same inputs: compared with the Python rendition of it run on
 * the stand-in files, with the same scripted replies.
 */
import { describe, expect, it } from 'vitest';
import { chatText, chatTurnsOf } from '../src/core/infmem/chat-text';
import { type InfmemEvent, infmemLoop, modelSteps } from '../src/core/infmem/loop';
import { cutDocument } from '../src/core/infmem/retrieval';
import type { CompletionRequest, RawCompleter } from '../src/core/infmem/thinking';
import { hasPython, runPython } from './support/python';
import { FNCALL_STANDIN_PATH, INFMEM_REFERENCE, INFMEM_STANDIN_PATH, standinPrompts } from './support/infmem-standins';

// One id per character: chunk and unit boundaries are character positions, the same on both sides.
const codec = { encode: (t: string) => [...t].map((c) => c.codePointAt(0)!), decode: (ids: readonly number[]) => String.fromCodePoint(...ids) };
const BOOK =
  'The tower was finished in 1889 for the fair. Its engineer had built bridges of iron. ' +
  'A river runs through the city; visitors cross it to reach the tower. The fair drew millions. ' +
  'Later the tower carried radio aerials, which saved it from being taken down. {memory} stays literal.';
const QUESTION = '  Why was the tower kept?  ';

/** A completer that answers from a list, in order, and keeps every request. */
function scripted(replies: readonly string[]): RawCompleter & { requests: CompletionRequest[] } {
  let next = 0;
  const requests: CompletionRequest[] = [];
  return {
    requests,
    complete: async (request) => {
      requests.push(request);
      const text = replies[next++];
      if (text === undefined) throw new Error(`No scripted reply for request ${next}.`);
      return { text };
    },
  };
}

async function read(replies: readonly string[], options: { earlyStop: number; thinking: boolean }) {
  const { templates, toolSystem } = await standinPrompts();
  const document = cutDocument(codec.encode(BOOK), codec, 120, 40);
  const completer = scripted(replies);
  const events: InfmemEvent[] = [];
  const steps = modelSteps({ templates, toolSystem, completer, chat: { family: 'qwen3' }, temperature: 0, topP: 1, thinking: options.thinking });
  for await (const e of infmemLoop({ document, question: QUESTION, steps, earlyStop: options.earlyStop })) events.push(e);
  const python = hasPython
    ? runPython<{ requests: { prompt: string; max_tokens: number }[]; final: string; step: number }>(INFMEM_REFERENCE, {
        infmem: INFMEM_STANDIN_PATH,
        fncall: FNCALL_STANDIN_PATH,
        question: QUESTION,
        chunks: document.chunks.map((c) => c.text),
        units: document.units.map((u) => ({ text: u.text, chunk: u.chunk })),
        replies,
        early_stop: options.earlyStop,
        thinking: options.thinking,
      })
    : null;
  return { events, requests: completer.requests, python, document };
}

const STOP = ['<think>\nThe notes hold it. STOP', '\nSTOP'];
const SEARCH = (query: string, topK = '5') => [
  `<think>\nMissing facts.\n</think>\n\n✿FUNCTION✿: retrievesearch\n✿ARGS✿: {"query": ${JSON.stringify(query)}, "top_k": ${topK}}`,
  '',
];
const WRITE = (memory: string) => ['<think>\nUpdating.\n</think>', `\n\n${memory}\n`];
const FINAL = ['<think>\nAnswering.', 'Therefore, the answer is radio aerials.'];

describe('the InfMem loop', () => {
  it.runIf(hasPython)('with a planner that always stops, writes two chunks, stops before the third and answers, every request as Python sends it', async () => {
    const replies = [...STOP, ...WRITE('m1'), ...STOP, ...WRITE('m2'), ...STOP, ...FINAL];
    const { events, requests, python } = await read(replies, { earlyStop: 3, thinking: true });
    expect(requests.map((r) => ({ prompt: r.prompt, max_tokens: r.maxTokens }))).toEqual(python!.requests);
    expect(events.map((e) => e.kind)).toEqual(['plan', 'write', 'plan', 'write', 'plan', 'answer']);
    const answer = events.at(-1)!;
    expect(answer).toMatchObject({ kind: 'answer', answer: 'radio aerials', step: 3 });
    expect(python!.step).toBe(3);
    // Thought cut off at its budget: closed with the file's words, and the second stage continues after them.
    expect(requests[1]!.prompt.endsWith('The notes hold it. STOP\n\nStand-in: the thought is cut here.\n</think>\n\n')).toBe(true);
  });

  it.runIf(hasPython)('with a planner that searches, gives each writer the four retrieved units and the history, as Python does', async () => {
    const replies = [...SEARCH('tower engineer'), ...WRITE('m1'), ...SEARCH("radio's aerials", '5.0'), ...WRITE('m2'), ...SEARCH('fair'), ...WRITE('m3')];
    const { events, requests, python, document } = await read([...replies, ...FINAL], { earlyStop: 3, thinking: true });
    expect(requests.map((r) => ({ prompt: r.prompt, max_tokens: r.maxTokens }))).toEqual(python!.requests);
    const writes = events.filter((e) => e.kind === 'write');
    expect(writes).toHaveLength(document.chunks.length);
    for (const w of writes) {
      expect(w.units).toHaveLength(4);
      const writerPrompt = requests.find((r) => r.prompt.includes(`<recurrent_chunk>\n${document.chunks[w.index]!.text}`))!.prompt;
      for (let k = 1; k <= 4; k++) expect(writerPrompt).toContain(`[Retrieved #${k}] `);
    }
    // The third planner sees both earlier queries, the second as Python's repr writes it, its top_k as 5.0.
    expect(requests[8]!.prompt).toContain(`Step 1: query='tower engineer', top_k=5\nStep 2: query="radio's aerials", top_k=5.0`);
  });

  it.runIf(hasPython)('with an early stop of one, can stop before writing anything', async () => {
    const { events, requests, python } = await read([...STOP, ...FINAL], { earlyStop: 1, thinking: true });
    expect(requests.map((r) => ({ prompt: r.prompt, max_tokens: r.maxTokens }))).toEqual(python!.requests);
    expect(events.map((e) => e.kind)).toEqual(['plan', 'answer']);
    expect(requests.at(-1)!.prompt).toContain('Nothing noted yet');
  });

  it.runIf(hasPython)('without thinking, sends one request per reply after an empty thought; replies without a call never add up to a stop', async () => {
    // A reply with no call and no STOP sets the count to one, never more: all three chunks are written.
    const replies = ['no call here', 'memory one', 'no call', 'memory two', 'no call', 'memory three', 'Therefore, the answer is x'];
    const { requests, python, events } = await read(replies, { earlyStop: 2, thinking: false });
    expect(events.filter((e) => e.kind === 'write')).toHaveLength(3);
    expect(requests.map((r) => ({ prompt: r.prompt, max_tokens: r.maxTokens }))).toEqual(python!.requests);
    expect(requests[0]!.prompt.endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n')).toBe(true);
  });
});

describe('the chat text', () => {
  it("renders Qwen2.5's default system message in front of a request without one, and Qwen3's none", () => {
    expect(chatText('hi', null, { family: 'qwen3', thinking: true })).toBe('<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n');
    expect(chatText('hi', null, { family: 'qwen2.5', thinking: true, defaultSystem: 'SYS' })).toBe(
      '<|im_start|>system\nSYS<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
    );
    expect(chatText('hi', 'TOOLS', { family: 'qwen2.5', thinking: false, defaultSystem: 'SYS' })).toBe(
      '<|im_start|>system\nTOOLS<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it('reads a rendered request back into its messages and the assistant turn begun, for a server with only a chat endpoint', () => {
    const thinkingOff = chatText('multi\nline', 'TOOLS', { family: 'qwen3', thinking: false });
    expect(chatTurnsOf(thinkingOff)).toEqual({
      messages: [
        { role: 'system', content: 'TOOLS' },
        { role: 'user', content: 'multi\nline' },
      ],
      prefix: '<think>\n\n</think>\n\n',
    });
    const secondStage = chatText('q', null, { family: 'qwen3', thinking: true }) + '<think>\nA thought.\n</think>';
    expect(chatTurnsOf(secondStage)).toEqual({ messages: [{ role: 'user', content: 'q' }], prefix: '<think>\nA thought.\n</think>' });
    expect(() => chatTurnsOf('<|im_start|>user\nq<|im_end|>\n')).toThrow(/open assistant turn/);
  });
});
