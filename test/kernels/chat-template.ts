import type { ChatMessage } from '../../src/core/generation';

/** The conversation-template fields of mlc-chat-config.json that lay out a chat prompt. */
export interface ConvTemplate {
  system_template: string;
  system_message: string;
  roles: Record<string, string>;
  role_templates?: Record<string, string>;
  seps: string[];
  role_content_sep?: string;
  role_empty_sep?: string;
}

const SPECIAL = /(<\|[a-z_]+\|>)/;

/** Tokens of template text: each `<|…|>` is one special token; the text between is counted by `count`. */
function templateCount(text: string, count: (plain: string) => number): number {
  return text.split(SPECIAL).reduce((n, part, i) => n + (i % 2 ? 1 : part ? count(part) : 0), 0);
}

/**
 * Tokens WebLLM's chat template adds around the contents of one request's
 * messages, worked out from the messages themselves (a system message in the
 * request replaces the template's default one). WebLLM encodes each message's text
 * separately; a message's content starts after a newline and ends before a
 * special token, so it is counted on its own and the template around it
 * adds exactly these tokens.
 */
export function chatTemplateTokens(t: ConvTemplate, messages: readonly ChatMessage[], count: (plain: string) => number): number {
  // The request's own system message is the app's text; the template's default is not.
  const ownSystem = messages.some((m) => m.role === 'system');
  let tokens = templateCount(t.system_template.replace('{system_message}', ''), count) + (ownSystem ? 0 : count(t.system_message));
  const turns = messages.filter((m) => m.role !== 'system');
  turns.forEach((m, i) => {
    const body = (t.role_templates?.[m.role] ?? `{${m.role}_message}`).replace(`{${m.role}_message}`, '\u0000');
    const [before, after] = body.split('\u0000') as [string, string];
    tokens += templateCount(`${t.roles[m.role]}${t.role_content_sep ?? ': '}${before}`, count);
    tokens += templateCount(`${after}${t.seps[i % t.seps.length]}`, count);
  });
  return tokens + templateCount(`${t.roles.assistant}${t.role_empty_sep ?? ': '}`, count);
}
