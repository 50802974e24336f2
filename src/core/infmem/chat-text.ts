/**
 * The text of a request as the official code sends it to a raw completion
 * endpoint: the messages rendered by the tokenizer's chat template with a
 * generation prompt. Qwen3's template (the InfMem 4B and 1.7B backbones) adds
 * nothing for a message list without a system message; Qwen2.5's puts its
 * default system message in front (given by the caller, read from the
 * model's own template).
 */
export type ChatFamily = 'qwen3' | 'qwen2.5';

export interface ChatTextOptions {
  family: ChatFamily;
  /** Whether the template is asked for thinking; off, Qwen3's template writes an empty thought after the assistant's turn opens. */
  thinking: boolean;
  /** Qwen2.5's default system message, used when the request has none. */
  defaultSystem?: string;
}

function turn(role: string, content: string): string {
  return `<|im_start|>${role}\n${content}<|im_end|>\n`;
}

/** `apply_chat_template([system?, user], tokenize=False, add_generation_prompt=True, enable_thinking=…)`. */
export function chatText(user: string, system: string | null, options: ChatTextOptions): string {
  let text = '';
  if (system !== null) text += turn('system', system);
  else if (options.family === 'qwen2.5') {
    if (options.defaultSystem === undefined) throw new Error("Qwen2.5's chat template needs its default system message.");
    text += turn('system', options.defaultSystem);
  }
  text += turn('user', user);
  text += '<|im_start|>assistant\n';
  if (options.family === 'qwen3' && !options.thinking) text += '<think>\n\n</think>\n\n';
  return text;
}

export interface ChatTurn {
  role: string;
  content: string;
}

/**
 * The messages a rendered request holds, and the start of the assistant's turn
 * after them (an empty thought, or a thought to continue): what a server with
 * only a chat endpoint is sent instead of the text.
 */
export function chatTurnsOf(text: string): { messages: ChatTurn[]; prefix: string } {
  const messages: ChatTurn[] = [];
  const turn = /<\|im_start\|>(\w+)\n([\s\S]*?)<\|im_end\|>\n/y;
  let at = 0;
  for (let m = turn.exec(text); m; m = turn.exec(text)) {
    messages.push({ role: m[1]!, content: m[2]! });
    at = turn.lastIndex;
  }
  const rest = text.slice(at);
  const open = '<|im_start|>assistant\n';
  if (!rest.startsWith(open)) throw new Error('The request does not end with an open assistant turn, so it cannot be sent as chat messages.');
  return { messages, prefix: rest.slice(open.length) };
}
