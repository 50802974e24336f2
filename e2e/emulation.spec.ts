import { chromium, expect, test } from '@playwright/test';
import { reached } from './reached';

/**
 * What the other tests ask the browser to pretend, checked by its effect in the page, so that a Chromium that quietly
 * stops honouring one of them fails here, by name, instead of letting a test pass that no longer emulates anything.
 */

test('offline: neither the page’s origin nor another host answers, whatever navigator.onLine says', async ({ page, context }) => {
  await page.goto('/');
  expect(await reached(page)).toEqual({ origin: 'answered', other: 'answered' });
  await context.setOffline(true);
  expect(await reached(page)).toEqual({ origin: 'network error', other: 'network error' });
  await context.setOffline(false);
  expect(await reached(page)).toEqual({ origin: 'answered', other: 'answered' });
});

test('a storage quota override: a write past it is refused with QuotaExceededError', async ({ page, baseURL }) => {
  await page.goto('/');
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Storage.overrideQuotaForOrigin', { origin: new URL(baseURL!).origin, quotaSize: 256 * 1024 });
  const outcome = await page.evaluate(async () => {
    // Random letters: IndexedDB compresses what it stores, and these stay larger than the quota.
    const text = Array.from({ length: 600_000 }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('');
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const open = indexedDB.open('emulation-probe', 1);
      open.onupgradeneeded = () => open.result.createObjectStore('s');
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error);
    });
    return new Promise<string>((resolve) => {
      const tx = db.transaction('s', 'readwrite');
      tx.objectStore('s').put(text, 1);
      tx.oncomplete = () => resolve('stored');
      tx.onabort = () => resolve(tx.error?.name ?? 'aborted');
    });
  });
  expect(outcome).toBe('QuotaExceededError');
});

test.describe('a locale', () => {
  test.use({ locale: 'zh-CN' });
  test('is what the page reads from navigator.language and Intl', async ({ page }) => {
    await page.goto('/');
    expect(await page.evaluate(() => [navigator.language, Intl.DateTimeFormat().resolvedOptions().locale])).toEqual(['zh-CN', 'zh-CN']);
  });
});

test('a colour scheme, a window size and a clock are what the page sees', async ({ page }) => {
  await page.clock.install();
  await page.goto('/');
  await page.emulateMedia({ colorScheme: 'dark' });
  expect(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches)).toBe(true);
  await page.emulateMedia({ colorScheme: 'light' });
  expect(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches)).toBe(false);
  await page.setViewportSize({ width: 390, height: 844 });
  expect(await page.evaluate(() => [innerWidth, innerHeight])).toEqual([390, 844]);
  const before = await page.evaluate(() => Date.now());
  await page.clock.setSystemTime(before + 65_000);
  expect(await page.evaluate(() => Date.now())).toBeGreaterThanOrEqual(before + 65_000);
});

test('WebGPU: no adapter without --enable-unsafe-webgpu, a software one with it', async ({ page }) => {
  const adapter = () => page.evaluate(async () => ((await navigator.gpu?.requestAdapter()) ? 'adapter' : 'none'));
  await page.goto('/');
  expect(await adapter()).toBe('none');
  const use = test.info().project.use;
  const flagged = await chromium.launch({
    executablePath: use.launchOptions?.executablePath,
    args: [...(use.launchOptions?.args ?? []), '--enable-unsafe-webgpu'],
  });
  try {
    const other = await flagged.newPage();
    await other.goto(page.url());
    const info = await other.evaluate(async () => {
      const a = await navigator.gpu.requestAdapter();
      return a ? { architecture: a.info.architecture, fallback: (a.info as { isFallbackAdapter?: boolean }).isFallbackAdapter ?? null } : null;
    });
    expect(info?.architecture).toMatch(/swiftshader/i);
  } finally {
    await flagged.close();
  }
});
