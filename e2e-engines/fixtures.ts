import { writeFileSync } from 'node:fs';
import { test as base } from '@playwright/test';
import { type EngineBrowser, type EngineName, launch, type Tab } from './drivers';
import { type Locator, screen } from './screen';

export interface EngineOptions {
  engine: EngineName;
}

interface Fixtures {
  /** A page of the app in a fresh profile of this project's engine, with the app's address as its base. */
  tab: Tab;
  /** Queries from the tab's document. */
  ui: Locator;
  /** Opens another page in another fresh profile (another browser, as far as storage goes). */
  openTab: () => Promise<Tab>;
}

/**
 * The cross-engine tests: each test gets tabs of its project's engine (real
 * Firefox ESR, or WebKitGTK's MiniBrowser with or without Safari's storage
 * features), one browser per worker, and a fresh profile per tab.
 */
export const test = base.extend<Fixtures, { engineBrowser: EngineBrowser } & EngineOptions>({
  engine: ['firefox', { option: true, scope: 'worker' }],
  engineBrowser: [
    async ({ engine }, use) => {
      const browser = await launch(engine);
      await use(browser);
      await browser.close();
    },
    { scope: 'worker', timeout: 60_000 },
  ],
  openTab: async ({ engineBrowser: browser, baseURL }, use, info) => {
    const tabs: Tab[] = [];
    await use(async () => {
      const tab = withBase(await browser.newTab(), baseURL!);
      tabs.push(tab);
      return tab;
    });
    // What each page showed when the test failed: its window and its text.
    if (info.status !== info.expectedStatus) {
      for (const [i, tab] of tabs.entries()) {
        const shot = await tab.screenshot().catch(() => null);
        if (shot) await info.attach(`tab ${i + 1}.png`, { path: write(info.outputPath(`tab-${i + 1}.png`), shot), contentType: 'image/png' });
        const text = `${String(await tab.run('document.body.innerText').catch((e: unknown) => e))}\n\n--- console\n${tab.logs().join('\n')}`;
        await info.attach(`tab ${i + 1}.txt`, { path: write(info.outputPath(`tab-${i + 1}.txt`), text), contentType: 'text/plain' });
      }
    }
    for (const tab of tabs) await tab.close().catch(() => undefined);
  },
  tab: async ({ openTab }, use) => {
    await use(await openTab());
  },
  ui: async ({ tab }, use) => {
    await use(screen(tab));
  },
});

function write(path: string, body: string | Buffer): string {
  writeFileSync(path, body);
  return path;
}

/** Resolves paths such as '/' against the app's address. */
function withBase(tab: Tab, baseURL: string): Tab {
  const goto = tab.goto.bind(tab);
  tab.goto = (url: string) => goto(new URL(url, baseURL).href);
  return tab;
}

export { expect } from '@playwright/test';
