import { readFileSync } from 'node:fs';
import { expect, type Page, test, type TestInfo } from '@playwright/test';
import { PLANTED, plantedBook, readBook, readHeldAt, withOwnServer } from './helpers';

const FOLLOW_UP = 'Which code opens the Marlowe archive vault?';

test('a finished read answers another question from its memory, kept across a reload and in both exports', async ({ page }, info) => {
  // Through a server of the test's own, which holds the sixth step until the title has been looked at.
  await withOwnServer(async (server) => {
    await readHeldAt(page, server, plantedBook(0.6), 5, 2000);
    // The tab's title follows the read, and is plain again once it is done.
    await expect.poll(() => page.title()).toMatch(/^\d{1,2} % · memagent-web$/);
    server.release();
    await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code, { timeout: 90_000 });
    await expect.poll(() => page.title()).toBe('memagent-web');
    await askFollowUp(page, info);
  });
});

/** Asks the finished read another question, then checks it after a reload and in both exports. */
async function askFollowUp(page: Page, info: TestInfo): Promise<void> {
  const box = page.getByRole('textbox', { name: 'Ask this memory' });
  await box.fill(FOLLOW_UP);
  await box.press('Enter');
  const answers = page.getByRole('list', { name: 'Follow-up answers' });
  const item = answers.getByRole('listitem');
  await expect(item).toHaveCount(1);
  await expect(item).toContainText(FOLLOW_UP);
  await expect(item).toContainText(PLANTED.code);
  await expect(item).toContainText(`Answered from a memory kept for another question ("${PLANTED.question}")`);
  // A model wrote these answers: neither is labelled as sentences picked without one.
  await expect(item).not.toContainText('picked without a model');
  await expect(page.getByRole('region', { name: 'Answer' }).getByRole('note')).toHaveCount(0);
  await expect(box).toHaveValue('');
  // An empty question is refused in words, and nothing is added.
  await page.getByRole('button', { name: 'Ask' }).click();
  await expect(page.getByRole('alert')).toContainText('Type a question first');

  await page.reload();
  await expect(page.getByRole('list', { name: 'Follow-up answers' }).getByRole('listitem')).toContainText(PLANTED.code);

  const [json] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export JSON' }).click()]);
  const jsonPath = info.outputPath('run.json');
  await json.saveAs(jsonPath);
  const data = JSON.parse(readFileSync(jsonPath, 'utf8'));
  expect(data.followUps).toHaveLength(1);
  expect(data.followUps[0]).toMatchObject({ index: 0, question: FOLLOW_UP });
  expect(data.followUps[0].answer).toContain(PLANTED.code);

  const [md] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export Markdown' }).click()]);
  const markdown = readFileSync(await md.path(), 'utf8');
  expect(markdown).toContain('## Follow-up answers');
  expect(markdown).toContain(`### ${FOLLOW_UP}`);
}

test('a read of over a minute that ends while its tab is hidden is told by a notification', async ({ browser, baseURL }) => {
  const context = await browser.newContext();
  // The permission as a person who allowed notifications gave it; the notification itself is the browser's own.
  await context.grantPermissions(['notifications'], { origin: baseURL! });
  const page = await context.newPage();
  await page.clock.install();
  await page.goto('/');
  // Notifications go through the service worker, which must be running.
  await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
  // Playwright keeps every page visible (no tab or window of it is ever hidden), so the page is told it is hidden,
  // as a browser tells a tab the person left.
  await page.evaluate(() => {
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
    document.dispatchEvent(new Event('visibilitychange'));
  });
  // The page's clock runs 65 s ahead: by it, the read has taken over a minute when it ends.
  await page.clock.setSystemTime(Date.now() + 65_000);
  // The read's end, as the worker tells every page of the app.
  await page.evaluate(() => {
    const ended = new Promise<string>((resolve) => {
      const channel = new BroadcastChannel('memagent-events');
      channel.onmessage = (e: MessageEvent<{ type: string; status?: string }>) => {
        if (e.data.type === 'status' && (e.data.status === 'done' || e.data.status === 'failed')) resolve(e.data.status);
      };
    });
    Object.assign(window, { readEnded: ended });
  });
  // The page's timers stand still from the press of Read until the read has ended: the notice must not depend on the
  // page having looked at storage while the read was under way (a fast read on a slow page ends before it looks).
  await readBook(page, plantedBook(0.5), { chunkTokens: 2000, wait: false, beforeRead: () => page.clock.pauseAt(Date.now() + 66_000) });
  expect(await page.evaluate(() => (window as unknown as { readEnded: Promise<string> }).readEnded)).toBe('done');
  await page.clock.resume();
  await page.getByRole('region', { name: 'Answer' }).getByText(PLANTED.code).first().waitFor();

  const shown = () =>
    page.evaluate(async () => (await (await navigator.serviceWorker.ready).getNotifications()).map((n) => ({ title: n.title, body: n.body, tag: n.tag })));
  await expect.poll(shown).toHaveLength(1);
  const [notice] = await shown();
  expect(notice!.title).toBe('Read of frankenstein.txt finished');
  expect(notice!.body).toContain(PLANTED.question);
  expect(notice!.body).toContain(PLANTED.code);
  await context.close();
});
