/**
 * Prompt templates, kept as data so that people can edit them. The tag names,
 * their order, the initial memory and the cue lines are what the released
 * MemAgent checkpoints were trained on; the instruction wording is ours.
 */
export interface PromptTemplates {
  /** Slots: {problem}, {memory}, {section}. */
  update: string;
  /** Slots: {problem}, {memory}. */
  final: string;
}

export const INITIAL_MEMORY = 'No previous memory';

export const DEFAULT_TEMPLATES: Readonly<PromptTemplates> = Object.freeze({
  update: `You are reading a long article one section at a time to solve a problem, keeping notes in a memory. Below are the problem, your memory so far, and the next section of the article, which may or may not help. Read the section carefully and write the updated memory: add any new information that helps solve the problem, and keep every relevant detail already in the memory.

<problem>
{problem}
</problem>

<memory>
{memory}
</memory>

<section>
{section}
</section>

Updated memory:
`,
  final: `You have read a long article and kept notes in a memory while reading. Using only the memory below, solve the problem. Give your final answer inside \\boxed{}.

<problem>
{problem}
</problem>

<memory>
{memory}
</memory>

Your answer:
`,
});

export type Slots = Partial<Record<'problem' | 'memory' | 'section', string>>;

const SLOT = /\{(problem|memory|section)\}/g;

/**
 * Fills a template's slots in one pass, so that slot-like text inside the book
 * or the memory is never substituted again.
 */
export function renderTemplate(template: string, slots: Slots): string {
  return template.replace(SLOT, (whole, name: keyof Slots) => slots[name] ?? whole);
}

// Chat-template control strings: `<|im_start|>` and kin, and the tags Qwen's
// vocabulary holds as single special tokens.
const CONTROL = /<(\|)|<(\/?(?:think|tool_call|tool_response))>/g;

/**
 * Untrusted text (the book, a memory, a question) made unable to pose as chat
 * control tokens: a word joiner after "<" keeps every character visible to the
 * model while no tokenizer can read a special token there.
 */
export function neutralizeControlText(text: string): string {
  return text.replace(CONTROL, (_m, bar: string | undefined, tag: string | undefined) => `<\u2060${bar ?? tag}${bar ? '' : '>'}`);
}

export function updatePrompt(templates: PromptTemplates, problem: string, memory: string, section: string): string {
  return renderTemplate(templates.update, {
    problem: neutralizeControlText(problem),
    memory: neutralizeControlText(memory),
    section: neutralizeControlText(section),
  });
}

export function finalPrompt(templates: PromptTemplates, problem: string, memory: string): string {
  return renderTemplate(templates.final, { problem: neutralizeControlText(problem), memory: neutralizeControlText(memory) });
}

/** What is wrong with edited templates, said so that a person can fix it; null when both are usable. */
export function templateProblem(templates: PromptTemplates): string | null {
  for (const slot of ['{problem}', '{memory}', '{section}']) {
    if (!templates.update.includes(slot)) return `The memory update template must contain ${slot}. Use "Reset to default" to restore it.`;
  }
  for (const slot of ['{problem}', '{memory}']) {
    if (!templates.final.includes(slot)) return `The final answer template must contain ${slot}. Use "Reset to default" to restore it.`;
  }
  return null;
}

/** Tokens a template costs with its slots empty: the fixed overhead of every step. */
export function templateOverhead(template: string, count: (text: string) => number): number {
  return count(renderTemplate(template, { problem: '', memory: '', section: '' }));
}
