import { writeFileSync } from 'node:fs';
import { expect } from '@playwright/test';
import { inPage } from '../e2e/helpers';
import { PLACES, type PlaceName } from '../e2e/places';
import type { Tab } from './drivers';
import { expectText, type Locator } from './screen';

/** Goes to a place as a person does: its link in the top navigation. */
export async function openPlace(page: Locator, name: PlaceName): Promise<void> {
  const place = PLACES.find((p) => p.link === name)!;
  await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { level: 1, name: place.heading, exact: true }).waitFor();
}

/** Writes a file for the page to pick, and gives its path. */
export function fileFor(path: string, bytes: Uint8Array | string): string {
  writeFileSync(path, bytes);
  return path;
}

/**
 * How long an import may take to show its book. Its storing stage (IndexedDB writes, the last one committed
 * durably) takes under a second, but beside other tests' disk writes it was seen held for over 25 s.
 */
const IMPORT_TIMEOUT = 90_000;

/** Adds a book through the Document field and waits for its line: "name — size, tokens". */
export async function addBook(page: Locator, path: string, name: string, timeout = IMPORT_TIMEOUT): Promise<void> {
  await page.getByLabel('Document').upload(path);
  await page.getByText(`${name} — `).waitFor(timeout);
}

/** Ticks exactly `names` in the checkbox group `group`. */
export async function tickOnly(page: Locator, group: string, names: readonly string[]): Promise<void> {
  const boxes = page.getByRole('group', { name: group }).getByRole('checkbox');
  const n = await boxes.count();
  for (let i = 0; i < n; i++) await boxes.nth(i).setChecked(false);
  for (const name of names) await page.getByRole('group', { name: group }).getByRole('checkbox', { name, exact: true }).setChecked(true);
}

/** Asks the question about the open book and presses Read. */
export async function read(page: Locator, question: string): Promise<void> {
  await page.getByLabel('Question').fill(question);
  await page.getByRole('button', { name: 'Read' }).click();
}

export async function expectAnswer(page: Locator, text: string, timeout = 90_000): Promise<void> {
  await expectText(page.getByRole('region', { name: 'Answer' }), text, timeout);
}

/** The Reading progress bar's value and maximum. */
export async function progress(page: Locator): Promise<{ now: number; max: number }> {
  const bar = page.getByRole('progressbar', { name: 'Reading progress' });
  return { now: Number(await bar.attribute('aria-valuenow')), max: Number(await bar.attribute('aria-valuemax')) };
}

export const stored = {
  counts: (tab: Tab) => tab.evaluate(inPage.counts),
  records: <T>(tab: Tab, store: string) => tab.evaluate(inPage.records, store) as Promise<T[]>,
  revisionIndexes: (tab: Tab) => tab.evaluate(inPage.revisionIndexes),
};

// ---------------------------------------------------------------- a step held

interface Hold {
  /** Revisions stored when the hold was set up. */
  base?: number;
  /** The count at which to hold: the commit that would pass it waits. */
  at?: number;
  seen?: number;
  held: boolean;
  released: boolean;
  error?: string;
}

/**
 * In the page: once `more` revisions beyond those stored now are committed,
 * keeps a read transaction on the revisions store open, so that the next
 * revision cannot be committed: the run waits in the middle of its step until
 * the test lets it go (or the page goes, with the transaction). Each count
 * opens the next transaction before it ends, so no commit slips between two
 * counts unseen, and the hold begins exactly at `more`, however fast the run.
 * Raising `at` lets exactly that many more commits through.
 */
function holdRevisions(more: number): void {
  const hold: Hold = { held: false, released: false };
  (window as unknown as { __revisionHold: Hold }).__revisionHold = hold;
  const open = indexedDB.open('memagent');
  open.onerror = () => (hold.error = String(open.error));
  open.onsuccess = () => {
    const db = open.result;
    db.onversionchange = () => db.close();
    const poll = () => {
      const store = db.transaction('revisions', 'readonly').objectStore('revisions');
      const count = store.count();
      count.onsuccess = () => {
        hold.seen = count.result;
        hold.base ??= count.result;
        hold.at ??= hold.base + more;
        if (hold.released) return;
        if (count.result < hold.at) return poll();
        hold.held = true;
        const keep = () => {
          if (hold.released) return;
          // Raised: the next count waits behind the commit let through, and holds again after it.
          if (hold.seen! < hold.at!) {
            hold.held = false;
            return poll();
          }
          store.count().onsuccess = keep;
        };
        keep();
      };
    };
    poll();
  };
}

function holdState(): Hold | undefined {
  return (window as unknown as { __revisionHold?: Hold }).__revisionHold;
}

/** Starts holding the run that is about to start once it has stored `more` revisions; call before pressing Read. */
export async function holdAfter(tab: Tab, more: number): Promise<void> {
  await tab.evaluate(holdRevisions, more);
  await expect.poll(async () => (await tab.evaluate(holdState))?.base, { message: 'the hold counted the stored revisions' }).toBeGreaterThanOrEqual(0);
}

/** Waits until the run is held, and gives the number of revisions it stored since the hold was set up. */
export async function held(tab: Tab): Promise<number> {
  await expect
    .poll(async () => {
      const hold = await tab.evaluate(holdState);
      return hold?.error ?? hold?.held;
    })
    .toBe(true);
  const hold = (await tab.evaluate(holdState))!;
  return hold.seen! - hold.base!;
}

/**
 * The page reads storage to show the run, and its reads wait behind the held
 * commit: lets the run on one commit at a time (each lets the reads queued
 * before it through) until `shown` says the page shows what the test needs.
 * Gives the number of revisions stored since the hold was set up.
 */
export async function stepUntil(tab: Tab, shown: () => Promise<boolean>, most = 10): Promise<number> {
  for (let step = 0; !(await shown()); step++) {
    if (step === most) throw new Error(`The page still did not show it after ${most} steps.`);
    const at = await tab.evaluate(() => {
      const hold = (window as unknown as { __revisionHold: Hold }).__revisionHold;
      return (hold.at = hold.seen! + 1);
    });
    await expect
      .poll(async () => {
        const hold = (await tab.evaluate(holdState))!;
        return hold.error ?? (hold.held && hold.seen! >= at);
      })
      .toBe(true);
  }
  return held(tab);
}

/** Lets the held run commit its step and go on. */
export async function release(tab: Tab): Promise<void> {
  await tab.evaluate(() => {
    const hold = (window as unknown as { __revisionHold?: Hold }).__revisionHold;
    if (hold) hold.released = true;
  });
}

// ---------------------------------------------------------------- downloads

/**
 * In the page: notes every file the app hands to the browser's download (an
 * anchor with `download` clicked) and reads it back from its blob: URL, then
 * lets the download go ahead as it would. WebKitGTK's MiniBrowser asks where
 * to save with a dialog that WebDriver cannot answer; this reads the very
 * bytes it would save.
 */
function noteDownloads(): void {
  const w = window as unknown as { __downloads?: { name: string; text: string }[] };
  if (w.__downloads) return;
  const notes: { name: string; text: string }[] = (w.__downloads = []);
  const click = HTMLAnchorElement.prototype.click;
  HTMLAnchorElement.prototype.click = function (this: HTMLAnchorElement) {
    if (this.download && this.href.startsWith('blob:')) {
      const name = this.download;
      void fetch(this.href)
        .then((r) => r.text())
        .then((text) => notes.push({ name, text }));
    }
    return click.call(this);
  };
}

/** Presses the button and gives back the file it downloads. */
export async function download(tab: Tab, button: Locator): Promise<{ name: string; text: string }> {
  await tab.evaluate(noteDownloads);
  const before = (await tab.evaluate(() => (window as unknown as { __downloads: unknown[] }).__downloads.length)) as number;
  await button.click();
  await expect.poll(() => tab.evaluate(() => (window as unknown as { __downloads: unknown[] }).__downloads.length)).toBeGreaterThan(before);
  return (await tab.evaluate((i: number) => (window as unknown as { __downloads: { name: string; text: string }[] }).__downloads[i]!, before))!;
}

// ---------------------------------------------------------------- what the engine has

/** In the page: which of the optional web APIs the app uses this engine offers here (the private file system: whether it opens). */
export async function features(): Promise<Record<string, boolean>> {
  const storage = (navigator as { storage?: StorageManager }).storage;
  const opfs = await (async () => storage?.getDirectory())().then(
    (root) => !!root,
    () => false,
  );
  return {
    'navigator.storage': !!storage,
    'storage.estimate': typeof storage?.estimate === 'function',
    'storage.persist': typeof storage?.persist === 'function',
    'private file system (OPFS)': opfs,
    'Cache Storage': typeof caches !== 'undefined',
    'cross-origin isolated': crossOriginIsolated,
    SharedArrayBuffer: typeof SharedArrayBuffer === 'function',
    requestIdleCallback: typeof requestIdleCallback === 'function',
    Notification: typeof Notification === 'function',
    WebGPU: 'gpu' in navigator,
    'service workers': 'serviceWorker' in navigator,
    'Web Locks': 'locks' in navigator,
    'ReadableStream async iteration': Symbol.asyncIterator in ReadableStream.prototype,
    'WebAssembly JSPI': 'Suspending' in WebAssembly,
  };
}
