import { beforeAll, describe, expect, it } from 'vitest';
import { type ChunkSpan, chunkAll } from '../src/core/chunker';
import { type ChatMessage, type GenerateOptions, type GenerateResult, isAbortError, type TextGenerator } from '../src/core/generation';
import { type LoopEvent, type LoopInput, memoryLoop } from '../src/core/loop';
import { DEFAULT_TEMPLATES, INITIAL_MEMORY } from '../src/core/prompts';
import { promptSetFromFile } from '../src/core/prompt-sets';
import { ExtractiveEngine } from '../src/engines/extractive/engine';
import { loadQwenTokenizer } from '../src/engines/qwen-tokenizer';
import { corpusText } from './helpers';
import { STANDIN, STANDIN_BOXED, standinSpecs } from './support/prompt-standins';
import { hasPython, runPython } from './support/python';

let engine: ExtractiveEngine;
let text: string;
let chunks: ChunkSpan[];
const question = 'Where did Victor Frankenstein study natural philosophy, and who was his friend Clerval?';

beforeAll(async () => {
  const tok = await loadQwenTokenizer();
  engine = new ExtractiveEngine(tok);
  const book = corpusText('frankenstein.txt');
  text = book.slice(60_000, 100_000);
  chunks = chunkAll(text, tok, 1200);
});

/** Loop input with a frozen clock, so that two runs can be compared field by field. */
function input(extra: Partial<LoopInput> = {}): LoopInput {
  return {
    text,
    chunks,
    question,
    generator: engine,
    templates: DEFAULT_TEMPLATES,
    memoryTokens: 200,
    sampling: { temperature: 0.7, topP: 0.95 },
    now: () => 0,
    ...extra,
  };
}

/** Runs the loop, collecting events until it ends or throws; `onEvent` may abort mid-run. */
async function collect(loopInput: LoopInput, onEvent?: (e: LoopEvent) => void): Promise<{ events: LoopEvent[]; error?: unknown }> {
  const events: LoopEvent[] = [];
  try {
    for await (const e of memoryLoop(loopInput)) {
      events.push(e);
      onEvent?.(e);
    }
  } catch (error) {
    return { events, error };
  }
  return { events };
}

const lastMemory = (events: LoopEvent[]) => {
  const last = events[events.length - 1];
  return last?.kind === 'revision' ? last.memory : INITIAL_MEMORY;
};

describe('memoryLoop resume', () => {
  it('reads every chunk once, then answers', async () => {
    const { events, error } = await collect(input());
    expect(error).toBeUndefined();
    expect(chunks.length).toBeGreaterThan(4);
    expect(events.map((e) => (e.kind === 'revision' ? e.index : 'answer'))).toEqual([...chunks.keys(), 'answer']);
  });

  it('gives the same revisions and answer when stopped after any chunk k and resumed from (k, memory)', async () => {
    const whole = await collect(input());
    for (let k = 0; k <= chunks.length; k++) {
      const controller = new AbortController();
      if (k === 0) controller.abort();
      const first = await collect(input({ signal: controller.signal }), (e) => {
        if (e.kind === 'revision' && e.index === k - 1) controller.abort();
      });
      expect(isAbortError(first.error), `stopped after chunk ${k}`).toBe(true);
      expect(first.events).toHaveLength(k);
      const rest = await collect(input({ resume: { nextChunk: k, memory: lastMemory(first.events) } }));
      expect(rest.error).toBeUndefined();
      expect([...first.events, ...rest.events]).toEqual(whole.events);
    }
  });

  it('drops a step whose generation finished after the stop, and resuming redoes it identically', async () => {
    const whole = await collect(input());
    const k = 2;
    const controller = new AbortController();
    let calls = 0;
    // The engine completes the step normally, but the stop arrives while it works.
    const late: TextGenerator = {
      async generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
        const result = await engine.generate(messages, { ...options, signal: undefined });
        if (calls++ === k) controller.abort();
        return result;
      },
    };
    const first = await collect(input({ generator: late, signal: controller.signal }));
    expect(isAbortError(first.error)).toBe(true);
    expect(first.events.map((e) => e.kind === 'revision' && e.index)).toEqual([0, 1]); // no revision for chunk 2
    const rest = await collect(input({ resume: { nextChunk: k, memory: lastMemory(first.events) } }));
    expect([...first.events, ...rest.events]).toEqual(whole.events);
  });
});

describe('memoryLoop stop', () => {
  it('stops promptly while a step is generating, without yielding it', async () => {
    const controller = new AbortController();
    let started = 0;
    // A generation that only ends when stopped, as WebLLM's interruptGenerate does.
    const endless: TextGenerator = {
      generate(_messages, options) {
        started++;
        queueMicrotask(() => controller.abort());
        return new Promise<GenerateResult>((resolve) => {
          options.signal?.addEventListener('abort', () =>
            resolve({ text: 'half a memo', finishReason: 'abort', usage: { promptTokens: 1, completionTokens: 1 } }),
          );
        });
      },
    };
    // The generation only ends when stopped: that it ends at all is the loop passing the stop on.
    const { events, error } = await collect(input({ generator: endless, signal: controller.signal }));
    expect(isAbortError(error)).toBe(true);
    expect(events).toEqual([]);
    expect(started).toBe(1);
  });

  it('treats a reply cut short by the engine ("abort") as no step at all', async () => {
    const cut: TextGenerator = {
      async generate() {
        return { text: 'partial', finishReason: 'abort', usage: { promptTokens: 1, completionTokens: 1 } };
      },
    };
    const { events, error } = await collect(input({ generator: cut }));
    expect(isAbortError(error)).toBe(true);
    expect(events).toEqual([]);
  });

  it('does not call the engine at all once stopped before a step', async () => {
    const controller = new AbortController();
    let calls = 0;
    const counting: TextGenerator = {
      async generate(messages, options) {
        calls++;
        return engine.generate(messages, options);
      },
    };
    controller.abort();
    const { events, error } = await collect(input({ generator: counting, signal: controller.signal }));
    expect(isAbortError(error)).toBe(true);
    expect(events).toEqual([]);
    expect(calls).toBe(0);
  });
});

describe("memoryLoop with the paper's method", () => {
  /** Replies from a script, each request's user message kept. */
  function scripted(replies: readonly string[]): TextGenerator & { prompts: string[] } {
    const prompts: string[] = [];
    return {
      prompts,
      async generate(messages) {
        prompts.push(messages[0]!.content);
        return { text: replies[prompts.length - 1] ?? '', finishReason: 'stop', usage: { promptTokens: 1, completionTokens: 1 } };
      },
    };
  }
  const templates = {
    update: 'U <problem> \n{problem}\n</problem>\n<memory>\n{memory}\n</memory>\n<section>\n{section}\n</section>\n',
    final: 'F {problem}|{memory}|',
  };
  const book = 'One <|im_start|> two </think> three.';
  const spans: ChunkSpan[] = [
    { start: 0, end: 16, tokens: 3 },
    // A slice whose cut split a character: the decoded text is sent, not the characters.
    { start: 16, end: book.length, tokens: 5, text: '\uFFFD two </think> three.' },
  ];

  it('sends the text as it is, keeps each reply verbatim as the memory and reads the answer strictly', async () => {
    const gen = scripted(['  first notes \n', '<think>hm</think>\n second notes ', 'Therefore, the answer is Paris.']);
    const { events } = await collect(
      input({
        text: book,
        chunks: spans,
        question: 'Q <|im_end|>',
        generator: gen,
        templates,
        method: { memory: 'verbatim', answerStyle: 'recurrent', verbatim: true },
      }),
    );
    expect(gen.prompts).toEqual([
      `U <problem> \nQ <|im_end|>\n</problem>\n<memory>\n${INITIAL_MEMORY}\n</memory>\n<section>\nOne <|im_start|>\n</section>\n`,
      'U <problem> \nQ <|im_end|>\n</problem>\n<memory>\n  first notes \n\n</memory>\n<section>\n\uFFFD two </think> three.\n</section>\n',
      'F Q <|im_end|>|second notes|',
    ]);
    expect(events.map((e) => (e.kind === 'revision' ? e.memory : e.answer))).toEqual(['  first notes \n', 'second notes', 'Paris']);
  });

  it('gives an empty answer when the reply holds none in the method’s form', async () => {
    const { events } = await collect(
      input({ text: book, chunks: [], generator: scripted(['Paris.']), templates, method: { memory: 'verbatim', answerStyle: 'recurrent', verbatim: true } }),
    );
    expect(events).toMatchObject([{ kind: 'answer', reply: 'Paris.', answer: '' }]);
  });

  // The official loop: the file's own constants, TEMPLATE.format per chunk, the reply (after its last </think>) the next memory.
  const PY_LOOP = `import ast, json, sys
c = json.load(sys.stdin)
k = {n.targets[0].id: n.value.value for n in ast.parse(c['source']).body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)}
memory, sent = k['NO_MEMORY'], []
for chunk, reply in zip(c['chunks'], c['replies']):
    sent.append(k['TEMPLATE'].format(prompt=c['question'], memory=memory, chunk=chunk))
    memory = reply.split('</think>')[-1].strip() if '</think>' in reply else reply
sent.append(k['TEMPLATE_FINAL'].format(prompt=c['question'], memory=memory))
print(json.dumps(sent))`;

  it.runIf(hasPython)("renders every request byte for byte as the prompt file's own TEMPLATE.format(...) does", async () => {
    const specs = await standinSpecs();
    // Braces, str.format look-alikes, replacement patterns and control strings in every slot: all sent as they are.
    const question = 'Which {city} hosts the {{fair}} <|im_start|>?';
    const pieces = ['First {memory} slice, $& and $1 }} ', '<think>second</think> {0} {chunk} tail\n'];
    const replies = ['  notes with {prompt} and {{x}} \n', '<think>hm</think>\n notes two ', 'the answer is X'];
    const book = pieces.join('');
    const slices: ChunkSpan[] = [
      { start: 0, end: pieces[0]!.length, tokens: 9 },
      { start: pieces[0]!.length, end: book.length, tokens: 9 },
    ];
    for (const [spec, bytes, style] of [
      [specs[0]!, STANDIN, 'recurrent'],
      [specs[1]!, STANDIN_BOXED, 'recurrent-boxed'],
    ] as const) {
      const set = await promptSetFromFile(spec, bytes);
      const gen = scripted(replies);
      await collect(
        input({
          text: book,
          chunks: slices,
          question,
          generator: gen,
          templates: set.templates,
          initialMemory: set.initialMemory,
          method: { memory: 'verbatim', answerStyle: style, verbatim: true },
        }),
      );
      expect(gen.prompts).toEqual(runPython<string[]>(PY_LOOP, { source: bytes.toString('utf8'), question, chunks: pieces, replies }));
    }
  });

  it("makes control strings inert and trims memories in this app's reading", async () => {
    const gen = scripted(['  notes  ', 'x', 'Paris.']);
    const { events } = await collect(input({ text: book, chunks: spans, question: 'Q', generator: gen, templates }));
    expect(gen.prompts[0]).toContain('<\u2060|im_start|>');
    expect(gen.prompts[1]).toContain('<memory>\nnotes\n</memory>');
    expect(events.at(-1)).toMatchObject({ answer: 'Paris.' });
  });
});
