import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Real WebLLM kernels on a software GPU take minutes: `npm run test:gpu` runs those (vitest.gpu.config.ts).
    exclude: ['test/gpu/**', '**/node_modules/**'],
    environment: 'node',
    testTimeout: 60_000,
    // Fixtures such as the tokenizer load in hooks; on a busy two-core machine that can take far longer than the 10 s default.
    hookTimeout: 60_000,
    // Two files at a time even on two cores (Vitest's default there is one): many tests wait on servers and child processes.
    maxWorkers: 2,
  },
});
