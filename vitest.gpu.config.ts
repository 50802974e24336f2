import { defineConfig } from 'vitest/config';

// The tests that run WebLLM's real kernels in node on a software GPU (SwiftShader): minutes each, so
// `npm run test:gpu` runs them on their own, one at a time, after the unit and end-to-end suites.
export default defineConfig({
  test: {
    include: ['test/gpu/**/*.test.ts'],
    environment: 'node',
    testTimeout: 30 * 60_000,
    hookTimeout: 10 * 60_000,
    fileParallelism: false,
    maxWorkers: 1,
  },
});
