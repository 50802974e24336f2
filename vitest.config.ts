import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 60_000,
    // Loading the tokenizer and the corpus in beforeAll can take seconds on a busy machine.
    hookTimeout: 60_000,
  },
});
