import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { type BrowserContext, chromium, expect, type Page, test } from '@playwright/test';
import { PLANTED, plantedBook, readBook } from './helpers';
import { openPlace } from './places';
import { reached } from './reached';

import { WEBLLM_CACHES } from '../pwa.config';

/** Resolves once a service worker is active for the page: the app's files are all stored by then. */
async function installed(page: Page): Promise<void> {
  await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
}

/** Puts one entry into each of WebLLM's caches, as a downloaded model would. */
function fillWebLLMCaches(page: Page): Promise<void> {
  return page.evaluate(async (names) => {
    for (const name of names) await (await caches.open(name)).put(`https://huggingface.co/mlc-ai/x/resolve/main/${name.split('/')[1]}`, new Response(name));
  }, WEBLLM_CACHES);
}

function webLLMCacheEntries(page: Page): Promise<number> {
  return page.evaluate(async (names) => {
    let n = 0;
    for (const name of names) if (await caches.has(name)) n += (await (await caches.open(name)).keys()).length;
    return n;
  }, WEBLLM_CACHES);
}

test('the app is installable: a manifest with icons and an active service worker', async () => {
  // Chromium never offers to install from an incognito profile: this one is on disk.
  const use = test.info().project.use;
  const profile = mkdtempSync(join(tmpdir(), 'memagent-install-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: use.launchOptions?.executablePath,
    args: use.launchOptions?.args,
    baseURL: use.baseURL,
  });
  try {
    await installable(context);
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
});

async function installable(context: BrowserContext): Promise<void> {
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto('/');
  await installed(page);
  const manifestUrl = await page.locator('link[rel="manifest"]').getAttribute('href');
  expect(manifestUrl).toBe('/manifest.webmanifest');
  const manifest = await (await page.request.get(manifestUrl!)).json();
  expect(manifest).toMatchObject({ name: 'memagent-web', display: 'standalone', start_url: '/' });
  const sizes = (manifest.icons as { sizes: string; type: string }[]).filter((i) => i.type === 'image/png').map((i) => i.sizes);
  expect(sizes).toEqual(expect.arrayContaining(['192x192', '512x512']));

  const cdp = await context.newCDPSession(page);
  const { errors: manifestErrors } = await cdp.send('Page.getAppManifest');
  expect(manifestErrors).toEqual([]);
  const { installabilityErrors } = await cdp.send('Page.getInstallabilityErrors');
  expect(installabilityErrors).toEqual([]);

  // The Storage region (in the Library) tells how much is used, whether it is persistent (a headless browser declines), and offline readiness.
  await openPlace(page, 'Library');
  const storage = page.getByRole('region', { name: 'Storage' });
  await expect(storage).toContainText('Offline: ready');
  await expect(storage).toContainText(/\d+(\.\d)? (B|KB|MB|GB) used of \d+(\.\d)? (KB|MB|GB) this browser allows this site/);
  await expect(storage.getByRole('meter', { name: 'Storage used' })).toBeVisible();
  const persistent = await page.evaluate(() => navigator.storage.persisted());
  if (!persistent) {
    await expect(storage).toContainText('Not persistent');
    await storage.getByRole('button', { name: 'Keep data persistent' }).click();
    const granted = await page.evaluate(() => navigator.storage.persisted());
    await expect(storage).toContainText(granted ? 'Persistent: the browser will not clear' : 'The browser declined for now');
  }
}

test('offline: the app loads after a reload, reads a book and answers', async ({ page, context }) => {
  await page.goto('/');
  await fillWebLLMCaches(page); // a model downloaded before the app's files were stored
  await installed(page);
  // Every file of the build is stored: the page, its scripts, the agent worker, the tokenizer chunk, wasm and fonts.
  // (llama.cpp's wasm builds are left to its engine, which stores the one this browser needs on first use.)
  const built = readdirSync(join(process.env.E2E_DIST ?? 'dist', 'assets'))
    .filter((f) => !/^wllama-.*\.wasm$/.test(f))
    .map((f) => `/assets/${f}`);
  const stored = await page.evaluate(async () => {
    const urls: string[] = [];
    for (const name of await caches.keys()) {
      if (name.includes('precache')) for (const r of await (await caches.open(name)).keys()) urls.push(new URL(r.url).pathname);
    }
    return urls;
  });
  expect(stored).toEqual(expect.arrayContaining(['/index.html', ...built]));
  expect(built.some((f) => /agent\.worker-.*\.js$/.test(f))).toBe(true);
  // Offline is what fails, not what navigator.onLine says (Chromium 150 says true in a page reloaded from the service
  // worker): before, the origin and another host answer; after, neither does.
  expect(await reached(page)).toEqual({ origin: 'answered', other: 'answered' });
  await context.setOffline(true);
  await page.reload();
  await expect(page.getByRole('combobox', { name: 'Engine' })).toHaveValue('extractive');
  expect(await reached(page)).toEqual({ origin: 'network error', other: 'network error' });

  await readBook(page, plantedBook(0.6));
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code);

  // The service worker keeps to the app's own files: a model file is never answered from its cache or
  // with the app's page, and WebLLM's caches are left as they were.
  const model = await page.evaluate(() =>
    fetch('/mlc-ai/x/resolve/main/params_shard_0.bin').then(
      (r) => `status ${r.status}`,
      () => 'network error',
    ),
  );
  expect(model).toBe('network error');
  expect(await webLLMCacheEntries(page)).toBe(WEBLLM_CACHES.length);
  // The run's own address opens it again after a reload, offline; the other places work offline too.
  await expect(page).toHaveURL(/[?&]run=/);
  await page.reload();
  await expect(page.getByRole('region', { name: 'Answer' })).toContainText(PLANTED.code);
  await openPlace(page, 'Library');
  await expect(page.getByRole('region', { name: 'Storage' })).toContainText('Offline: ready');
});

const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
};

/** A static host for a copy of the build, so that a test can deploy a new version under the page. */
async function serve(dir: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(/^(\.\.[/\\])+/, '');
    const file = join(dir, path === '/' ? 'index.html' : path);
    try {
      const body = readFileSync(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-cache' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { server, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` };
}

test('a new version is offered with an Update button, and takes over when pressed', async ({ page }) => {
  const dir = mkdtempSync(join(tmpdir(), 'memagent-deploy-'));
  cpSync(process.env.E2E_DIST ?? 'dist', dir, { recursive: true });
  const { server, url } = await serve(dir);
  try {
    await page.goto(url);
    await fillWebLLMCaches(page);
    await installed(page);
    await page.reload(); // a returning visitor: the page is now served by the installed version
    expect(await page.evaluate(() => !!navigator.serviceWorker.controller)).toBe(true);
    await expect(page.getByRole('button', { name: 'Update' })).toHaveCount(0);

    // Deploy: a different service worker script is a new version.
    writeFileSync(join(dir, 'sw.js'), `${readFileSync(join(dir, 'sw.js'), 'utf8')}\n// next version\n`);
    await page.evaluate(() => navigator.serviceWorker.getRegistration().then((r) => r?.update()));
    const prompt = page.getByRole('status', { name: 'App update' });
    await expect(prompt).toContainText('A new version of memagent-web is ready');
    expect(await page.evaluate(() => navigator.serviceWorker.getRegistration().then((r) => !!r?.waiting))).toBe(true);

    const reloaded = page.waitForEvent('load');
    await prompt.getByRole('button', { name: 'Update' }).click();
    await reloaded;
    await expect(page.getByRole('combobox', { name: 'Engine' })).toHaveValue('extractive');
    const after = await page.evaluate(() =>
      navigator.serviceWorker.getRegistration().then((r) => ({ waiting: !!r?.waiting, active: !!r?.active, controlled: !!navigator.serviceWorker.controller })),
    );
    expect(after).toEqual({ waiting: false, active: true, controlled: true });
    await expect(page.getByRole('status', { name: 'App update' })).toHaveCount(0);
    // The new version cleaned up after the old one but left WebLLM's models alone.
    expect(await webLLMCacheEntries(page)).toBe(WEBLLM_CACHES.length);
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
