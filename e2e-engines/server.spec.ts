import { expect, test } from './fixtures';
import { addBook, expectAnswer, fileFor, progress, read, stored } from './app';
import { PLANTED, plantedBook, range } from '../e2e/helpers';
import { startOpenAIServer } from '../test/support/openai-server';

/**
 * An OpenAI-compatible server on another origin (another port), as a person
 * runs vLLM or llama.cpp beside the app: connected, asked for every step
 * (a busy reply retried after its Retry-After), and read to the answer.
 */
test('a book is read through an OpenAI-compatible server on another origin, a busy reply retried', async ({ tab, ui: page, baseURL }, info) => {
  const server = await startOpenAIServer({ allowedOrigin: new URL(baseURL!).origin });
  try {
    await tab.goto('/');
    await page.getByRole('combobox', { name: 'Engine' }).selectOption('OpenAI-compatible server');
    await page.getByLabel('Base URL', { exact: true }).fill(server.url);
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByText(/^Connected: memagent-test \(context window 32,768 tokens/).waitFor();
    // The in-flight bound says what is wrong beside the field, in this engine's accessibility tree too.
    const atOnce = page.getByLabel('Requests in flight at once');
    await atOnce.fill('0');
    expect(await page.getByRole('alert').text()).toBe('Requests in flight at once must be a whole number from 1 to 64.');
    expect(await atOnce.attribute('aria-invalid')).toBe('true');
    await atOnce.fill('2');
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await atOnce.attribute('aria-invalid')).toBeNull();
    await addBook(page, fileFor(info.outputPath('frankenstein.txt'), plantedBook(0.6)), 'frankenstein.txt');
    await page.getByLabel('Chunk size (tokens)').fill('4000');
    const before = server.chatRequests.length;
    server.fail({ kind: 429, retryAfter: 0.2 });
    await read(page, PLANTED.question);
    await expectAnswer(page, PLANTED.code);
    const { now, max } = await progress(page);
    expect(now).toBe(max);
    expect(Object.values(await stored.revisionIndexes(tab))).toEqual([range(max)]);
    // Every step and the answer asked once, and the step the busy reply turned away once more.
    expect(server.chatRequests.length - before).toBe(max + 2);
    expect(server.chatRequests.filter((r) => r.status === 429)).toHaveLength(1);
  } finally {
    await server.stop();
  }
});
