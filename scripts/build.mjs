// `npm run build`: Vite's production build, failing when it prints a warning, so that a warning is fixed where it
// arises (see node-only.config.ts) instead of scrolling past in every build's output.
import { build, createLogger } from 'vite';

const logger = createLogger();
const warnings = [];
for (const level of ['warn', 'warnOnce']) {
  const print = logger[level].bind(logger);
  logger[level] = (message, options) => {
    warnings.push(message);
    print(message, options);
  };
}

// `--outDir <folder>` builds elsewhere than dist/, as `vite build --outDir` does.
const at = process.argv.indexOf('--outDir');
const outDir = at >= 0 ? process.argv[at + 1] : undefined;
await build({ customLogger: logger, ...(outDir ? { build: { outDir } } : {}) });
if (warnings.length > 0) {
  console.error(`The build printed ${warnings.length === 1 ? 'a warning' : `${warnings.length} warnings`}: fix the cause, then build again.`);
  process.exitCode = 1;
}
