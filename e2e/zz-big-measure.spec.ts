import { writeFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { prose } from '../test/fixtures/documents';

test('100 MB text import', async ({ page, browser }) => {
  test.setTimeout(600_000);
  await page.goto('/');
  await page.getByRole('combobox', { name: 'Engine' }).waitFor();
  const paragraph = Array.from({ length: 200 }, (_, i) => prose(i)).join('\n\n');
  const text = `${paragraph}\n\n`.repeat(Math.ceil((Number(process.env.BIG_MB ?? 100) * 1024 * 1024) / (paragraph.length + 2)));
  writeFileSync('/tmp/big.txt', text);
  console.log('file MB', (Buffer.byteLength(text) / 1024 / 1024).toFixed(1));

  const cdp = await browser.newBrowserCDPSession();
  const { targetInfos } = await cdp.send('Target.getTargets');
  const worker = targetInfos.find((t) => t.type === 'worker');
  const pageTarget = targetInfos.find((t) => t.type === 'page');
  let id = 0;
  const pending = new Map<number, (v: any) => void>();
  cdp.on('Target.receivedMessageFromTarget', (e: any) => {
    const msg = JSON.parse(e.message);
    pending.get(msg.id)?.(msg.result);
  });
  const sessions: Record<string, string> = {};
  for (const [name, t] of [['worker', worker], ['page', pageTarget]] as const) {
    const { sessionId } = await cdp.send('Target.attachToTarget', { targetId: t!.targetId, flatten: false });
    sessions[name] = sessionId;
  }
  const heap = (name: string) =>
    new Promise<number>((resolve) => {
      const n = ++id;
      pending.set(n, (r) => resolve((r.usedSize + (r.backingStorageSize ?? 0)) / 1024 / 1024));
      void cdp.send('Target.sendMessageToTarget', { sessionId: sessions[name]!, message: JSON.stringify({ id: n, method: 'Runtime.getHeapUsage' }) });
    });
  const base = { worker: await heap('worker'), page: await heap('page') };
  const peak = { ...base };
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak.worker = Math.max(peak.worker, await heap('worker'));
      peak.page = Math.max(peak.page, await heap('page'));
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  await page.evaluate(() => {
    (window as any).__gaps = [];
    let last = performance.now();
    const tick = () => {
      const now = performance.now();
      (window as any).__gaps.push(now - last);
      last = now;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  const t0 = Date.now();
  await page.getByLabel('Document').setInputFiles('/tmp/big.txt');
  await expect(page.getByText('big.txt — ')).toBeVisible({ timeout: 500_000 });
  const ms = Date.now() - t0;
  sampling = false;
  await sampler;
  const gaps: number[] = await page.evaluate(() => (window as any).__gaps);
  gaps.sort((a, b) => b - a);
  console.log('import ms', ms);
  console.log('JS heap MB worker base', base.worker.toFixed(0), 'peak', peak.worker.toFixed(0), '| page base', base.page.toFixed(0), 'peak', peak.page.toFixed(0));
  console.log('longest frame gaps ms', gaps.slice(0, 5).map((g) => g.toFixed(0)).join(' '), 'frames', gaps.length);
  console.log(await page.getByText('big.txt — ').textContent());
});
