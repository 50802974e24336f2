/**
 * Prompt templates, kept as data so that people can edit them. The layout of
 * the app's own templates (tags, their order, blank lines, the `<problem> `
 * line with its trailing space, the initial memory, the cue lines) is the one
 * the released MemAgent checkpoints were trained on; the instruction sentences
 * are the app's own. The checkpoints' own sentences are read at run time from
 * the MemAgent repository (see prompt-sets.ts), never stored here.
 */
export interface PromptTemplates {
  /** Slots: {problem} (or {prompt}), {memory}, {section} (or {chunk}). */
  update: string;
  /** Slots: {problem} (or {prompt}), {memory}. */
  final: string;
}

export const INITIAL_MEMORY = 'No previous memory';

/** What the model-free (extractive) engine replies when its memory holds nothing that answers the question. */
export const NO_ANSWER_REPLY = 'The memory holds nothing that answers the question.';

/**
 * Whether a memory is still the read's empty start: the words the prompt
 * sends before anything is written (the paper's initial memory), which
 * the page and the Markdown export show as no memory rather than as its text.
 */
export function isEmptyStart(memory: string): boolean {
  return memory.trim() === INITIAL_MEMORY;
}

/**
 * The problem block's opening line as the checkpoints were trained on it: with
 * a space before the line break (Qwen's tokenizer reads `>` and ` \n`, not `>\n`).
 */
export const PROBLEM_OPEN = '<problem> ';

export const DEFAULT_TEMPLATES: Readonly<PromptTemplates> = Object.freeze({
  update: `You are reading a long article one section at a time to solve a problem, keeping notes in a memory. Below are the problem, your memory so far, and the next section of the article, which may or may not help. Read the section carefully and write the updated memory: add any new information that helps solve the problem, and keep every relevant detail already in the memory.

${PROBLEM_OPEN}
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

${PROBLEM_OPEN}
{problem}
</problem>

<memory>
{memory}
</memory>

Your answer:
`,
});

export type Slots = Partial<Record<'problem' | 'memory' | 'section', string>>;

/** Slot names as the official templates spell them, beside the app's own. */
const ALIASES: Record<string, keyof Slots> = { problem: 'problem', prompt: 'problem', memory: 'memory', section: 'section', chunk: 'section' };

const SLOT = /\{\{|\}\}|\{(problem|prompt|memory|section|chunk)\}/g;

/**
 * Fills a template's slots in one pass, so that slot-like text inside the book
 * or the memory is never substituted again. Braces follow Python's
 * `str.format`: `{{` and `}}` are literal braces, so a template pasted from
 * the official MemAgent files renders exactly as `TEMPLATE.format(...)` would.
 * A brace that `str.format` would refuse (`\boxed{}`) is kept as written.
 * `{prompt}` and `{chunk}` name the same slots as `{problem}` and `{section}`.
 */
export function renderTemplate(template: string, slots: Slots): string {
  return template.replace(SLOT, (whole, name: string | undefined) => {
    if (whole === '{{') return '{';
    if (whole === '}}') return '}';
    return slots[ALIASES[name!]!] ?? whole;
  });
}

/** Whether a template holds a slot under either of its names. */
function hasSlot(template: string, slot: keyof Slots): boolean {
  for (const m of template.matchAll(SLOT)) if (m[1] && ALIASES[m[1]] === slot) return true;
  return false;
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

const SLOT_NAMES: Record<keyof Slots, string> = { problem: '{problem} (or {prompt})', memory: '{memory}', section: '{section} (or {chunk})' };

/** What is wrong with edited templates, said so that a person can fix it; null when both are usable. */
export function templateProblem(templates: PromptTemplates): string | null {
  for (const slot of ['problem', 'memory', 'section'] as const) {
    if (!hasSlot(templates.update, slot)) return `The memory update template must contain ${SLOT_NAMES[slot]}. Use "Reset to default" to restore it.`;
  }
  for (const slot of ['problem', 'memory'] as const) {
    if (!hasSlot(templates.final, slot)) return `The final answer template must contain ${SLOT_NAMES[slot]}. Use "Reset to default" to restore it.`;
  }
  return null;
}

/** Tokens a template costs with its slots empty: the fixed overhead of every step. */
export function templateOverhead(template: string, count: (text: string) => number): number {
  return count(renderTemplate(template, { problem: '', memory: '', section: '' }));
}
