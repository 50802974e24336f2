import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { build, createLogger, type Plugin } from 'vite';
import { nodeBranchImports } from '../node-only.config';

const ENTRY = '\0entry';

/** An entry that imports the tokenizer package the way the app does: a plugin serves it, so no file is needed. */
const entry: Plugin = {
  name: 'entry',
  resolveId: (id) => (id === ENTRY ? id : null),
  load: (id) => (id === ENTRY ? "export const load = () => import('@mlc-ai/web-tokenizers');" : null),
};

/** The warnings a browser build of that entry prints, built in memory. */
async function warningsOf(plugins: Plugin[]): Promise<string[]> {
  const logger = createLogger('silent');
  const warnings: string[] = [];
  logger.warn = (message) => void warnings.push(message);
  logger.warnOnce = logger.warn;
  await build({
    configFile: false,
    root: process.cwd(),
    customLogger: logger,
    plugins: [...plugins, entry],
    build: { write: false, rolldownOptions: { input: ENTRY, checks: { bundlerTimings: false } } },
  });
  return warnings;
}

describe('the browser build of the tokenizer package', () => {
  // A production build, as `npm run build` makes: Vite checks a browser build's Node built-ins only there.
  beforeEach(() => vi.stubEnv('NODE_ENV', 'production'));
  afterEach(() => vi.unstubAllEnvs());

  it('warns of no Node built-in once its Node-only imports resolve to an empty module', async () => {
    // Left to Vite, its Node branch's imports are stubbed with a warning each.
    expect((await warningsOf([])).join('\n')).toMatch(/Module "(url|module)" has been externalized/);
    expect(await warningsOf([nodeBranchImports()])).toEqual([]);
  });
});
