import { existsSync } from 'node:fs';
import { defineConfig } from '@playwright/test';

// Playwright's own browser download is not needed: use the system Chromium where there is one.
const systemChromium = ['/usr/lib/chromium/chromium', '/usr/bin/chromium'].find((p) => existsSync(p));
const executablePath = process.env.CHROMIUM_PATH ?? systemChromium;
// Several checkouts can test side by side, each with its own build and port.
const port = Number(process.env.E2E_PORT ?? 4173);
const outDir = process.env.E2E_DIST ?? 'dist';
// The OpenAI-compatible test server sits beside the page's port (4190 beside 4173), so side-by-side runs do not share one.
const openaiPort = Number(process.env.E2E_OPENAI_PORT ?? port + 17);
// The stand-in model host for the WebLLM tests (4195 beside 4173).
const modelPort = Number(process.env.E2E_MODEL_PORT ?? port + 22);
// The shared fixtures (the tiny GGUF for the llama.cpp tests), 4198 beside 4173.
const fixturesPort = Number(process.env.E2E_FIXTURES_PORT ?? port + 25);
/** The build, served as `npm start` serves it; also used by the cross-engine suite (playwright.engines.config.ts). */
export const pageServer = {
  command: `npx vite preview --host 127.0.0.1 --port ${port} --strictPort --outDir ${outDir}`,
  url: `http://127.0.0.1:${port}`,
  reuseExistingServer: !process.env.CI,
  timeout: 60_000,
};
/** The shared fixtures (the tiny GGUF). */
export const fixturesServer = {
  command: `npx tsx test/support/serve-fixtures.ts --port ${fixturesPort}`,
  url: `http://127.0.0.1:${fixturesPort}/llama-2-tiny-random.gguf`,
  reuseExistingServer: !process.env.CI,
  timeout: 60_000,
};
const chromiumArgs = ['--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];
const webgpuArgs = [...chromiumArgs, '--enable-unsafe-webgpu'];

export default defineConfig({
  testDir: 'e2e',
  timeout: 120_000,
  expect: { timeout: 30_000 },
  fullyParallel: false,
  workers: 2,
  retries: 0,
  reporter: [['list']],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    // The interface follows the browser's language: English unless a test asks for another.
    locale: 'en-US',
    trace: 'off',
    launchOptions: {
      executablePath,
      args: chromiumArgs,
    },
  },
  projects: [
    // WebGPU through SwiftShader (a software adapter, no shader-f16) only with this flag; without it there is no adapter.
    {
      name: 'webgpu',
      testMatch: /webllm\.spec\.ts$/,
      testIgnore: /kernels-webllm\.spec\.ts$/,
      use: { launchOptions: { executablePath, args: webgpuArgs } },
    },
    { name: 'default', testIgnore: /webllm\.spec\.ts$/ },
    // Real WebLLM kernels keep both cores of a small machine busy for minutes: `npm run test:kernels` runs them on their own.
    {
      name: 'kernels',
      testMatch: /kernels-webllm\.spec\.ts$/,
      use: { launchOptions: { executablePath, args: webgpuArgs } },
    },
  ],
  webServer: [
    pageServer,
    {
      command: `npx tsx test/support/serve-openai.ts --port ${openaiPort} --allowed-origin http://127.0.0.1:${port} --api-key sk-e2e-kept-local`,
      url: `http://127.0.0.1:${openaiPort}/v1/models`,
      reuseExistingServer: !process.env.CI,
      timeout: 60_000,
    },
    {
      command: `npx tsx test/support/serve-models.ts --port ${modelPort}`,
      url: `http://127.0.0.1:${modelPort}/__log`,
      reuseExistingServer: !process.env.CI,
      timeout: 60_000,
    },
    fixturesServer,
  ],
});
