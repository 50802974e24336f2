import { expect, type Locator, test } from '@playwright/test';

test.use({ colorScheme: 'dark' });

const look = (l: Locator) =>
  l.evaluate((e) => {
    const s = getComputedStyle(e);
    return { background: s.backgroundColor, color: s.color, border: s.borderTopColor };
  });

/** Relative luminance of an rgb() colour, 0 (black) to 1 (white). */
function luminance(rgb: string): number {
  const [r, g, b] = (rgb.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map((v) => {
    const c = Number(v) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

test('in the dark theme, "Add a question", the "Ask this memory" field and Evaluate\'s file picker are drawn dark, as the other fields are', async ({
  page,
}) => {
  await page.goto('/');
  const question = page.getByLabel('Question');
  const field = await look(question);
  expect(luminance(field.background)).toBeLessThan(0.05);

  const add = page.getByRole('button', { name: 'Add a question' });
  const button = await look(add);
  expect(button.background).toBe(field.background);
  expect(luminance(button.color)).toBeGreaterThan(0.3);

  // A finished read offers its memory to more questions.
  const text = `${'The harbour was quiet that spring, and the boats stayed in. '.repeat(40)}\n\nThe vault code for the Marlowe archive is 4829137.\n`;
  await page.getByLabel('Document').setInputFiles({ name: 'marlowe.txt', mimeType: 'text/plain', buffer: Buffer.from(text) });
  await expect(page.getByText('marlowe.txt — ')).toBeVisible();
  await question.fill('What is the vault code for the Marlowe archive?');
  await page.getByRole('button', { name: 'Read', exact: true }).click();
  const ask = page.getByRole('textbox', { name: 'Ask this memory' });
  await expect(ask).toBeVisible({ timeout: 60_000 });
  const followUp = await look(ask);
  expect(followUp.background).toBe(field.background);
  expect(followUp.color).toBe(field.color);
  expect(followUp.border).toBe(field.border);
  // Nothing has been asked of the memory yet: it is not asked "again".
  const followUpRegion = page.getByRole('region', { name: 'Follow-up' });
  await expect(followUpRegion.getByRole('heading', { name: 'Ask this memory a new question' })).toBeVisible();
  await expect(followUpRegion.getByRole('heading', { name: 'Ask this memory again' })).toHaveCount(0);

  // Evaluate's dataset files are chosen with a button drawn as the app's others, and its tasks stand in even columns.
  await page.getByRole('link', { name: 'Evaluate' }).click();
  const picker = page.getByRole('button', { name: 'Choose dataset files…' });
  const chooser = await look(picker);
  expect(chooser.background).toBe(button.background);
  expect(luminance(chooser.color)).toBeGreaterThan(0.3);
  const lefts = await page
    .getByRole('group', { name: 'Tasks' })
    .getByRole('checkbox')
    .evaluateAll((boxes) => boxes.map((b) => Math.round(b.getBoundingClientRect().left)));
  expect(lefts.length).toBeGreaterThan(10);
  expect(new Set(lefts).size).toBeLessThanOrEqual(3);
});
