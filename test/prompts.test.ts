import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ChatMessage, GenerateOptions, GenerateResult, TextGenerator } from '../src/core/generation';
import { memoryLoop } from '../src/core/loop';
import { DEFAULT_TEMPLATES, finalPrompt, INITIAL_MEMORY, isEmptyStart, renderTemplate, templateOverhead, updatePrompt } from '../src/core/prompts';
import { readPythonStrings } from '../src/core/python-strings';
import { buildExport, EMPTY_MEMORY_NOTE, toMarkdown } from '../src/storage/export';
import type { RevisionRecord, RunRecord } from '../src/storage/schema';

const lines = (s: string) => s.split('\n');

/** The opening tag's line: the problem's carries a trailing space, as the checkpoints were trained on it. */
const opening = (tag: string) => (tag === 'problem' ? '<problem> ' : `<${tag}>`);

/** The content between `<tag>` and `</tag>`, both alone on their lines. */
function block(prompt: string, tag: string): string {
  const ls = lines(prompt);
  const open = ls.indexOf(opening(tag));
  const close = ls.indexOf(`</${tag}>`);
  expect(open, `<${tag}> on its own line`).toBeGreaterThanOrEqual(0);
  expect(close, `</${tag}> on its own line`).toBeGreaterThan(open);
  return ls.slice(open + 1, close).join('\n');
}

const lastLine = (s: string) => lines(s.trimEnd()).pop();

describe('update prompt', () => {
  const prompt = updatePrompt(DEFAULT_TEMPLATES, 'Who built the creature?', 'Victor studied at Ingolstadt.', 'A section\nof two lines.');

  it('holds problem, memory and section blocks in that order, each tag on its own line', () => {
    const ls = lines(prompt);
    const at = (l: string) => ls.indexOf(l);
    const order = ['<problem> ', '</problem>', '<memory>', '</memory>', '<section>', '</section>'].map(at);
    for (const i of order) expect(i).toBeGreaterThan(0); // all present, after the instruction
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(block(prompt, 'problem')).toBe('Who built the creature?');
    expect(block(prompt, 'memory')).toBe('Victor studied at Ingolstadt.');
    expect(block(prompt, 'section')).toBe('A section\nof two lines.');
  });

  it('separates the blocks by one blank line and ends with the cue "Updated memory:"', () => {
    const ls = lines(prompt);
    expect(ls[ls.indexOf('</problem>') + 1]).toBe('');
    expect(ls[ls.indexOf('</problem>') + 2]).toBe('<memory>');
    expect(ls[ls.indexOf('</memory>') + 1]).toBe('');
    expect(ls[ls.indexOf('</memory>') + 2]).toBe('<section>');
    expect(ls[ls.indexOf('</section>') + 1]).toBe('');
    expect(lastLine(prompt)).toBe('Updated memory:');
    // The instruction comes first, then a blank line before the first block.
    expect(ls[ls.indexOf('<problem> ') - 1]).toBe('');
    expect(ls.slice(0, ls.indexOf('<problem> ') - 1).join(' ')).toMatch(/memory/i);
  });
});

describe('the layout of the app’s wording', () => {
  // The stand-in has the pinned file's exact layout, with sentences of our own.
  const standin = readPythonStrings(readFileSync(new URL('./fixtures/prompt-files/recurrent.py', import.meta.url), 'utf8'));
  /** Everything after the instruction paragraph, with the official slot names. */
  const layout = (template: string) => template.slice(template.indexOf('\n\n')).replace('{problem}', '{prompt}').replace('{section}', '{chunk}');

  it('is the trained layout: "<problem> " with its trailing space, tags, blank lines, cue lines and the final newline', () => {
    expect(layout(DEFAULT_TEMPLATES.update)).toBe(layout(standin.get('TEMPLATE')!));
    expect(layout(DEFAULT_TEMPLATES.final)).toBe(layout(standin.get('TEMPLATE_FINAL')!));
    expect(layout(DEFAULT_TEMPLATES.update)).toBe(
      '\n\n<problem> \n{prompt}\n</problem>\n\n<memory>\n{memory}\n</memory>\n\n<section>\n{chunk}\n</section>\n\nUpdated memory:\n',
    );
    expect(INITIAL_MEMORY).toBe(standin.get('NO_MEMORY'));
  });
});

describe('final prompt', () => {
  const prompt = finalPrompt(DEFAULT_TEMPLATES, 'Who built the creature?', 'Victor built it.');

  it('holds problem then memory, no section, and ends with the cue "Your answer:"', () => {
    const ls = lines(prompt);
    expect(ls.indexOf('<problem> ')).toBeLessThan(ls.indexOf('<memory>'));
    expect(ls[ls.indexOf('</problem>') + 1]).toBe('');
    expect(block(prompt, 'memory')).toBe('Victor built it.');
    expect(prompt).not.toContain('<section>');
    expect(lastLine(prompt)).toBe('Your answer:');
    expect(prompt).toContain('\\boxed{}'); // the instruction asks for the boxed form the answer extractor reads
  });
});

describe('renderTemplate', () => {
  it('substitutes in one pass: slot names inside the book or the memory stay as written', () => {
    const section = 'A letter said {memory} and {problem} and {section}; also $& and $1.';
    const memory = 'Notes mention {section}.';
    const prompt = updatePrompt(DEFAULT_TEMPLATES, 'Q?', memory, section);
    expect(block(prompt, 'section')).toBe(section);
    expect(block(prompt, 'memory')).toBe(memory);
    expect(block(prompt, 'problem')).toBe('Q?');
  });

  it('fills edited templates and leaves slots without a value untouched', () => {
    expect(renderTemplate('[{problem}|{memory}|{other}]', { problem: 'p' })).toBe('[p|{memory}|{other}]');
  });

  it('measures the overhead of a template with every slot empty', () => {
    const count = (s: string) => s.length;
    expect(templateOverhead('<a>{problem}</a>{memory}{section}', count)).toBe('<a></a>'.length);
  });
});

describe('the loop and the prompts', () => {
  it('starts from the memory "No previous memory" and carries each reply as the next memory', async () => {
    const prompts: string[] = [];
    const generator: TextGenerator = {
      async generate(messages: readonly ChatMessage[], _options: GenerateOptions): Promise<GenerateResult> {
        expect(messages).toHaveLength(1); // one independent single-turn request, no history
        prompts.push(messages[0]!.content);
        return { text: `  memory after step ${prompts.length}  `, finishReason: 'stop', usage: { promptTokens: 0, completionTokens: 0 } };
      },
    };
    const text = 'first part|second part';
    const chunks = [
      { start: 0, end: 10, tokens: 2 },
      { start: 11, end: text.length, tokens: 2 },
    ];
    const events = [];
    for await (const e of memoryLoop({
      text,
      chunks,
      question: 'What?',
      generator,
      templates: DEFAULT_TEMPLATES,
      memoryTokens: 64,
      sampling: { temperature: 0.7, topP: 0.95 },
    })) {
      events.push(e);
    }
    expect(INITIAL_MEMORY).toBe('No previous memory');
    expect(prompts).toHaveLength(3);
    expect(block(prompts[0]!, 'memory')).toBe(INITIAL_MEMORY);
    expect(block(prompts[0]!, 'section')).toBe('first part');
    expect(block(prompts[1]!, 'memory')).toBe('memory after step 1'); // whole reply, trimmed, overwrites
    expect(block(prompts[1]!, 'section')).toBe('second part');
    expect(block(prompts[2]!, 'memory')).toBe('memory after step 2');
    expect(lastLine(prompts[2]!)).toBe('Your answer:');
    expect(events.map((e) => e.kind)).toEqual(['revision', 'revision', 'answer']);
  });
});

describe('the empty start of a read', () => {
  it('is the initial memory the prompt sends, and nothing else', () => {
    expect(isEmptyStart(INITIAL_MEMORY)).toBe(true);
    expect(isEmptyStart(`${INITIAL_MEMORY}\n`)).toBe(true);
    expect(isEmptyStart('No previous memory of the vault code.')).toBe(false);
    expect(isEmptyStart('')).toBe(false);
  });

  it('is said plainly in the Markdown export, while a written memory stays in its fence', () => {
    const run = {
      id: 'r',
      documentId: 'd',
      documentName: 'book.txt',
      question: 'Who?',
      engineId: 'extractive',
      settings: { chunkTokens: 1000, memoryTokens: 256, temperature: 0, topP: 1, contextTokens: 4096 },
      templates: { ...DEFAULT_TEMPLATES },
      chunks: [
        { start: 0, end: 10, tokens: 5 },
        { start: 10, end: 20, tokens: 5 },
      ],
      status: 'done',
      nextChunk: 2,
      memory: 'Victor made the creature.',
      createdAt: 1,
      updatedAt: 1,
    } as RunRecord;
    const revision = (index: number): RevisionRecord => ({
      runId: 'r',
      index,
      memoryTokens: 5,
      wordsAdded: 0,
      wordsRemoved: 0,
      start: index * 10,
      end: index * 10 + 10,
      chunkTokens: 5,
      promptTokens: 50,
      completionTokens: 5,
      ms: 1,
      finishReason: 'stop',
      retries: 0,
      committedAt: 1,
    });
    const md = toMarkdown(buildExport({ run, revisions: [revision(0), revision(1)], memories: [INITIAL_MEMORY, 'Victor made the creature.'] }));
    expect(md).toContain(`## Revision 1 (chunk 1 of 2)\n\n${EMPTY_MEMORY_NOTE}\n`);
    expect(md).not.toContain(INITIAL_MEMORY);
    expect(md).toContain('## Revision 2 (chunk 2 of 2)\n\n```\nVictor made the creature.\n```');
  });
});
