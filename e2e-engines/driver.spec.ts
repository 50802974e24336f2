import { expect, test } from './fixtures';

/**
 * The driver speaks this browser: a tab opens at the window's size, loads the app, runs a script and reloads. The
 * journeys depend on this test (playwright.engines.config.ts), so a browser the driver cannot drive fails here once,
 * with the browser's version and the command it did not know, instead of in every journey.
 */
test('the driver opens a tab at 1280 px, loads the app, runs a script in it and reloads it, with the storage features its configuration names', async ({
  tab,
}) => {
  await tab.goto('/');
  expect(await tab.evaluate(() => window.outerWidth)).toBe(1280);
  expect(await tab.evaluate(() => document.title)).toBe('memagent-web');
  // The storage features a configuration claims (WebKit's are switched on by a launch flag) are the page's.
  const storage = await tab.evaluate(() => typeof navigator.storage?.estimate === 'function');
  expect(storage, 'navigator.storage.estimate').toBe(tab.engine !== 'webkit-defaults');
  await tab.reload();
  expect(await tab.url()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
});
