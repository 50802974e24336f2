import { chromium, test } from '@playwright/test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { plantedBook, readBook } from './helpers';
test('probe', async () => {
  test.setTimeout(120_000);
  const use = test.info().project.use;
  const origin = new URL(use.baseURL!).origin;
  for (const q of [2_000_000, 3_000_000]) {
    const ctx = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'q-')), { executablePath: use.launchOptions?.executablePath, args: use.launchOptions?.args, baseURL: use.baseURL, serviceWorkers: 'block' });
    const p = ctx.pages()[0]!;
    await (await ctx.newCDPSession(p)).send('Storage.overrideQuotaForOrigin', { origin, quotaSize: q });
    await p.goto('/');
    await readBook(p, plantedBook(0.5), { chunkTokens: 100, wait: false });
    for (let i = 0; i < 8; i++) {
      await p.waitForTimeout(1000);
      console.log(q, JSON.stringify(await p.evaluate(async () => ({ est: (await navigator.storage.estimate()).usage, now: document.querySelector('[role="progressbar"]')?.getAttribute('aria-valuenow'), alert: [...document.querySelectorAll('[role="alert"]')].map((a) => a.textContent).join(' | ') }))));
    }
    await ctx.close();
  }
});
