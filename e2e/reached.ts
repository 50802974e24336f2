import type { Page } from '@playwright/test';

/** The fixtures server that Playwright starts beside the page (playwright.config.ts): another host. */
const FIXTURES_PORT = Number(process.env.E2E_FIXTURES_PORT ?? Number(process.env.E2E_PORT ?? 4173) + 25);

/**
 * Whether a request that no cache keeps reaches the page's origin, and whether another host answers: offline is what
 * fails, not what navigator.onLine says. The other host is asked from a blank page, where the app's Content Security
 * Policy (which refuses it online too) does not apply.
 */
export async function reached(page: Page): Promise<{ origin: string; other: string }> {
  const ask = (p: Page, url: string) =>
    p.evaluate(
      (u) =>
        fetch(u, { cache: 'no-store', mode: 'no-cors' }).then(
          () => 'answered',
          () => 'network error',
        ),
      url,
    );
  const origin = await ask(page, `/reached-probe-${Date.now()}`);
  const blank = await page.context().newPage();
  try {
    return { origin, other: await ask(blank, `http://127.0.0.1:${FIXTURES_PORT}/llama-2-tiny-random.gguf`) };
  } finally {
    await blank.close();
  }
}
