import { expect, test } from '@playwright/test';
import { PLANTED, plantedBook } from './helpers';

// A browser whose language is Simplified Chinese.
test.use({ locale: 'zh-CN' });

test('a browser in Simplified Chinese reads a book through the zh-CN names, and switching to English is kept after a reload', async ({ page }) => {
  await page.goto('/');
  await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
  await expect(page.getByRole('navigation', { name: '页面' }).getByRole('link', { name: '书库' })).toBeVisible();
  await expect(page.getByRole('heading', { level: 1, name: '阅读一本书' })).toBeVisible();
  await expect(page.getByRole('combobox', { name: '引擎' })).toHaveValue('extractive');

  await page.getByLabel('文档').setInputFiles({ name: 'frankenstein.txt', mimeType: 'text/plain', buffer: plantedBook(0.6) });
  // Sizes and counts through Intl, with the unit words of the language.
  await expect(page.getByText(/^frankenstein\.txt — [\d.]+ KB, [\d,]+ 个词元$/)).toBeVisible();
  await page.getByLabel('问题', { exact: true }).fill(PLANTED.question);
  await page.getByRole('button', { name: '阅读', exact: true }).click();

  const answer = page.getByRole('region', { name: '答案' });
  await expect(answer).toContainText(PLANTED.code, { timeout: 90_000 });
  await expect(page.getByRole('progressbar', { name: '阅读进度' })).toHaveAttribute('aria-valuetext', /^已读 \d+ \/ \d+ 块$/);
  await expect(page.getByText(/^完成 · \d+ \/ \d+ 块/)).toBeVisible();
  // The answer's sources, in the same words: the planted sentence, its section, and the link into the inspector.
  const source = answer.getByRole('region', { name: '出处' }).getByRole('figure').filter({ hasText: PLANTED.sentence });
  await expect(source).toContainText(/片段 \d+ \/ \d+ · 记于修订 \d+/);
  await expect(source.getByRole('link', { name: /^在检查器中显示修订 \d+$/ })).toBeVisible();
  // The question and the answer are shown as they are, never translated.
  await expect(page.getByRole('region', { name: '运行' }).getByRole('heading', { level: 2 })).toHaveText(PLANTED.question);
  // Sentences in a row take no space after a Chinese full stop; a memory's size in the timeline is one unit, never broken.
  await expect(answer.getByRole('note')).toContainText('。');
  expect(await answer.getByRole('note').textContent()).not.toMatch(/[。？！] /);
  await page.setViewportSize({ width: 360, height: 800 });
  const size = page
    .getByRole('list', { name: '记忆修订' })
    .getByText(/^\d+ 词元$/)
    .first();
  // Asked again until it holds: the timeline's virtual list may draw its entries anew after the window shrinks.
  await expect(size).toHaveCSS('white-space', 'nowrap');
  await expect.poll(() => size.evaluate((e) => e.getClientRects().length)).toBe(1);
  await page.setViewportSize({ width: 1280, height: 720 });
  // A look at the page in Simplified Chinese, kept with the test's output.
  await page.screenshot({ path: test.info().outputPath('read-zh-CN.png') });

  await page.getByRole('combobox', { name: '语言' }).selectOption('en');
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
  await expect(page.getByRole('button', { name: 'Read', exact: true })).toBeVisible();
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code);

  await page.reload();
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
  await expect(page.getByRole('combobox', { name: 'Language' })).toHaveValue('en');
  await expect(page.getByRole('heading', { level: 1, name: 'Read a book' })).toBeVisible();
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code);
});

test('in Simplified Chinese, the prompt settings say what is fetched, from where and why, and WebLLM without a GPU says why in the same words on Read and Models', async ({
  page,
}) => {
  await page.goto('/');
  const settings = page.getByRole('region', { name: '设置' });
  await settings.getByText('采样与提示词').click();
  const files = settings.getByRole('region', { name: '提示词文件' });
  await expect(files).toContainText('本应用不附带这些文字');
  await expect(files).toContainText('从作者在 GitHub 上的仓库 BytedTsinghua-SIA/MemAgent 的固定提交 76b7a65 获取其提示词文件');
  await expect(files).toContainText('书、问题和记忆都不会随之发送');

  await page.getByRole('combobox', { name: '引擎' }).selectOption('webllm');
  const alert = page.getByRole('alert');
  await expect(alert).toContainText('WebLLM 无法在此运行');
  const words = (await alert.textContent())!;
  await expect(page.getByRole('button', { name: '阅读', exact: true })).toBeDisabled();
  await page.getByRole('navigation', { name: '页面' }).getByRole('link', { name: '模型', exact: true }).click();
  await expect(page.getByRole('region', { name: '模型', exact: true }).getByText(words, { exact: true })).toBeVisible();
});
