import { chromium, test } from '@playwright/test';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { plantedBook, readBook } from './helpers';
test('probe', async () => {
  test.setTimeout(90_000);
  const dir = mkdtempSync(join(tmpdir(), 'dur-'));
  const use = test.info().project.use;
  const launch = () => chromium.launchPersistentContext(dir, { executablePath: use.launchOptions?.executablePath, args: use.launchOptions?.args, baseURL: use.baseURL });
  let ctx = await launch();
  let page = ctx.pages()[0]!;
  await page.goto('/');
  await readBook(page, plantedBook(0.5), { chunkTokens: 100, wait: false });
  await page.waitForFunction(() => Number(document.querySelector('[role="progressbar"]')?.getAttribute('aria-valuenow')) >= 20, null, { polling: 10 });
  const runId = new URL(page.url()).searchParams.get('run')!;
  const pid = readdirSync('/proc').filter((p) => /^\d+$/.test(p)).find((p) => { try { const stat = readFileSync(`/proc/${p}/stat`, 'utf8'); return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid && readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(dir); } catch { return false; } });
  process.kill(Number(pid), 'SIGKILL');
  await ctx.close().catch(() => undefined);
  ctx = await launch();
  page = ctx.pages()[0]!;
  page.on('console', (m) => console.log('console', m.type(), m.text().slice(0, 300)));
  await page.goto(`/?run=${runId}`);
  for (let i = 0; i < 10; i++) {
    await page.waitForTimeout(1000);
    const w = page.workers()[0];
    const inWorker = w ? await Promise.race([w.evaluate(async (id) => {
      const t = performance.now();
      const db = await new Promise<IDBDatabase>((res, rej) => { const o = indexedDB.open('memagent'); o.onsuccess = () => res(o.result); o.onerror = () => rej(o.error); o.onblocked = () => rej(new Error('blocked')); });
      const t1 = performance.now();
      const run = await new Promise<any>((res) => { const g = db.transaction('runs').objectStore('runs').get(id); g.onsuccess = () => res(g.result); });
      db.close();
      return { open: t1 - t, get: performance.now() - t1, next: run?.nextChunk, status: run?.status };
    }, runId).catch((e) => String(e)), new Promise((r) => setTimeout(() => r('worker eval timeout'), 3000))]) : 'no worker';
    const st = await page.evaluate(async () => ({ status: document.querySelector('[role="progressbar"]')?.getAttribute('aria-valuenow') }));
    console.log(JSON.stringify(st), JSON.stringify(inWorker));
  }
  await ctx.close();
});
