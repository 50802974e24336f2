/**
 * Which system message a step's request carries. MemAgent's requests hold one
 * user message and no system message, so the serving side's chat template
 * adds the model's own default (vLLM, llama.cpp with the GGUF's template).
 * WebLLM renders conversations with its own conversation template instead,
 * whose default differs; there the request names the model's own default
 * explicitly, so that every engine sends the model the same conversation.
 */

/** What Qwen2.5's own chat template inserts when a conversation has no system message. */
export const QWEN25_DEFAULT_SYSTEM = 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.';

/** The Jinja string escapes a chat template's literal text may hold. */
function unescapeJinja(text: string): string {
  return text.replace(/\\([nrt'"\\])/g, (_m, c: string) => ({ n: '\n', r: '\r', t: '\t' })[c] ?? c);
}

/**
 * The system message a chat template (tokenizer_config.json's `chat_template`)
 * inserts when the conversation has none: '' for a ChatML template that
 * inserts none (Qwen3), null where the template is not ChatML and so cannot
 * be read here.
 */
export function templateDefaultSystem(chatTemplate: string): string | null {
  if (!chatTemplate.includes('<|im_start|>')) return null;
  // The default is a literal: a system turn whose text is written out, not taken from the messages.
  const literal = /<\|im_start\|>system(?:\\n|\n)([^'"{}<]+?)<\|im_end\|>/.exec(chatTemplate);
  return literal ? unescapeJinja(literal[1]!) : '';
}

/** A model's tokenizer_config.json, as far as it matters here. */
export interface TokenizerConfigLike {
  chat_template?: unknown;
}

/**
 * The system message every WebLLM request sends: the one the model's own chat
 * template (from its tokenizer_config.json) inserts by default; where that file
 * could not be had, Qwen2.5's for Qwen2.5 models and MemAgent's fine-tunes of
 * them; otherwise none (undefined), leaving WebLLM's own. For a model whose
 * template inserts no system message this is '', which WebLLM renders as an
 * empty system turn unless its conversation template skips empty ones.
 */
export function webllmSystemMessage(tokenizerConfig: TokenizerConfigLike | undefined, model: { id: string; modelUrl?: string }): string | undefined {
  const template = tokenizerConfig?.chat_template;
  const text =
    typeof template === 'string'
      ? template
      : Array.isArray(template)
        ? (template.find((t: { name?: string }) => t?.name === 'default') as { template?: string } | undefined)?.template
        : undefined;
  if (typeof text === 'string') {
    const found = templateDefaultSystem(text);
    if (found !== null) return found;
  }
  if (/qwen2\.5|memagent/i.test(`${model.id} ${model.modelUrl ?? ''}`)) return QWEN25_DEFAULT_SYSTEM;
  return undefined;
}
