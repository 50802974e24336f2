import { abortError, type ChatMessage, type GenerateOptions, type GenerateResult } from '../../core/generation';
import { nextTask } from '../../core/tasks';
import type { Tokenizer } from '../../core/tokenizer';
import type { Engine } from '../engine';
import { answerFrom } from './answer-sentences';
import { EXTRACTIVE_INFO } from './info';
import { memorySentences, rewriteMemory, sentencesOf, withoutInitial } from './memory-step';

interface ParsedPrompt {
  problem: string;
  /** Absent in a full-context prompt, which holds the whole document as its section. */
  memory?: string;
  /** Absent in the final-answer prompt. */
  section?: string;
}

/** Reads the <problem>, <memory> and <section> blocks that every template carries (`<problem> ` with its trailing space too). */
export function parsePrompt(prompt: string): ParsedPrompt {
  const opening = /<problem> *\n/.exec(prompt);
  const problemOpen = opening?.index ?? -1;
  const problemStart = problemOpen + (opening?.[0].length ?? 0);
  const problemClose = prompt.indexOf('\n</problem>', problemStart);
  const memoryOpen = prompt.indexOf('<memory>\n', problemClose);
  const sectionOpen = prompt.indexOf('<section>\n', Math.max(memoryOpen, problemClose));
  const memoryClose = prompt.lastIndexOf('\n</memory>', sectionOpen >= 0 ? sectionOpen : prompt.length);
  const direct = memoryOpen < 0 && sectionOpen >= 0;
  if (problemOpen < 0 || problemClose < 0 || (!direct && (memoryOpen < 0 || memoryClose < memoryOpen))) {
    throw new Error('The prompt template lost its <problem> or <memory> block; reset the templates to their defaults.');
  }
  const parsed: ParsedPrompt = { problem: prompt.slice(problemStart, problemClose) };
  if (!direct) parsed.memory = prompt.slice(memoryOpen + '<memory>\n'.length, memoryClose);
  if (sectionOpen >= 0) {
    const sectionClose = prompt.lastIndexOf('\n</section>');
    const from = sectionOpen + '<section>\n'.length;
    parsed.section = prompt.slice(from, sectionClose >= from ? sectionClose : prompt.length);
  }
  return parsed;
}

/**
 * The paper's "heuristic memory" baseline as an engine: each step keeps the
 * sentences of memory and section with the most IDF-weighted overlap with the
 * question, within the memory cap; the answer is the best-matching memory text,
 * boxed or after "the answer is" as the final prompt asks.
 */
export class ExtractiveEngine implements Engine {
  readonly id = EXTRACTIVE_INFO.id;
  readonly contextWindow = 131_072;

  constructor(readonly tokenizer: Tokenizer) {}

  async generate(messages: readonly ChatMessage[], options: GenerateOptions): Promise<GenerateResult> {
    // The work below is synchronous: without a turn of the event loop first, a stop (Ctrl-C, a worker's
    // message) would be heard only once the whole book is read, since the loop's awaits are then all microtasks.
    await nextTask();
    if (options.signal?.aborted) throw abortError();
    const prompt = messages[messages.length - 1]?.content ?? '';
    const parsed = parsePrompt(prompt);
    // Answers in the form the instructions ask for (outside the blocks, which hold the book): \boxed{} where they mention it, else "the answer is …".
    const lastBlock = Math.max(prompt.lastIndexOf('</memory>'), prompt.lastIndexOf('</section>'));
    const boxed = prompt.slice(0, prompt.search(/<problem> *\n/)).includes('\\boxed') || prompt.slice(lastBlock).includes('\\boxed');
    const text =
      parsed.memory === undefined
        ? answerFrom(parsed.problem, sentencesOf(parsed.section ?? ''), boxed) // the whole document at once: answer from it directly
        : parsed.section === undefined
          ? answerFrom(parsed.problem, memorySentences(withoutInitial(parsed.memory)), boxed)
          : this.update(parsed, options.maxTokens);
    options.onToken?.(text);
    return {
      text,
      finishReason: 'stop',
      usage: {
        promptTokens: messages.reduce((n, m) => n + this.tokenizer.count(m.content), 0),
        completionTokens: this.tokenizer.count(text),
      },
    };
  }

  private update(p: ParsedPrompt, maxTokens: number): string {
    return rewriteMemory(p.problem, p.memory ?? '', [p.section ?? ''], { tokenizer: this.tokenizer, maxTokens });
  }
}
