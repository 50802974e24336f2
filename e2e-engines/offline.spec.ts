import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from './fixtures';
import { addBook, expectAnswer, fileFor, openPlace, read } from './app';
import { expectText } from './screen';
import { PLANTED, plantedBook } from '../e2e/helpers';
import { serveFiles } from '../test/support/serve-fixtures';

const dist = process.env.E2E_DIST ?? 'dist';

/**
 * Offline for real: the app is served by a server of this test's own, which
 * stops once the service worker has stored the app. The page then reloads
 * from the service worker alone and reads a book.
 */
test('the app reloads with its server gone and reads a book', async ({ tab, ui: page }, info) => {
  const server = await serveFiles({ port: 0, roots: { '/': dist }, pages: { '/': readFileSync(join(dist, 'index.html'), 'utf8') }, isolate: true });
  let stopped = false;
  try {
    await tab.goto(`${server.url}/`);
    await expect.poll(() => page.getByRole('combobox', { name: 'Engine' }).inputValue()).toBe('extractive');
    await tab.evaluate(() => navigator.serviceWorker.ready.then(() => true));
    await openPlace(page, 'Library');
    await expectText(page.getByRole('region', { name: 'Storage' }), 'Offline: ready');

    await server.close();
    stopped = true;
    await tab.reload();
    await expectText(page.getByRole('region', { name: 'Storage' }), 'Offline: ready');
    // The app as it looked online: its stylesheet came from the service worker too, and applies.
    expect(await tab.evaluate(() => [...document.styleSheets].reduce((n, s) => n + s.cssRules.length, 0))).toBeGreaterThan(0);
    // Nothing answers at the app's address now but its service worker.
    expect(
      await tab.evaluate(() =>
        fetch('/not-stored').then(
          (r) => `status ${r.status}`,
          () => 'network error',
        ),
      ),
    ).toBe('network error');

    await openPlace(page, 'Read');
    await addBook(page, fileFor(info.outputPath('frankenstein.txt'), plantedBook(0.6)), 'frankenstein.txt');
    await read(page, PLANTED.question);
    await expectAnswer(page, PLANTED.code);
    await tab.reload();
    await expectAnswer(page, PLANTED.code);
  } finally {
    if (!stopped) await server.close();
  }
});
