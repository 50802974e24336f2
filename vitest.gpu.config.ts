import { defineConfig } from 'vitest/config';

// The tests that run WebLLM's real kernels in node on a software GPU (SwiftShader): minutes each, so
// `npm run test:gpu` runs them on their own, one at a time. CI runs them at a low priority beside the other
// suites, where they take only the CPU time the others leave, so a test may take far longer than on an idle
// machine: the limits catch a hang, not slowness.
export default defineConfig({
  test: {
    include: ['test/gpu/**/*.test.ts'],
    environment: 'node',
    testTimeout: 60 * 60_000,
    hookTimeout: 10 * 60_000,
    fileParallelism: false,
    maxWorkers: 1,
  },
});
