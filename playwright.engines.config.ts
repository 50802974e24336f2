import { defineConfig } from '@playwright/test';
import type { EngineOptions } from './e2e-engines/fixtures';
import { fixturesServer, pageServer } from './playwright.config';

// The same user journeys as the Chromium tests, in real Firefox ESR and WebKitGTK (see docs/browsers.md).
// The page is the build in `dist` (or E2E_DIST) at E2E_PORT, as for playwright.config.ts, with the fixtures
// server (the tiny GGUF) beside it at +25.
export default defineConfig<EngineOptions>({
  testDir: 'e2e-engines',
  timeout: 240_000,
  expect: { timeout: 30_000 },
  fullyParallel: false,
  workers: 2,
  // A browser here can lose its driver session outright (MiniBrowser under xvfb answered NoSuchSessionError once in
  // about seven runs): one more try, which Playwright reports as flaky, so that it stays visible.
  retries: 1,
  reporter: [['list']],
  use: { baseURL: pageServer.url },
  // Each configuration first checks that its driver speaks the browser installed (driver.spec.ts); its journeys run after.
  projects: (['firefox', 'webkit-safari', 'webkit-defaults'] as const).flatMap((engine) => [
    { name: `${engine}-driver`, testMatch: /driver\.spec\.ts$/, use: { engine } },
    { name: engine, testIgnore: /driver\.spec\.ts$/, dependencies: [`${engine}-driver`], use: { engine } },
  ]),
  webServer: [pageServer, fixturesServer],
});
