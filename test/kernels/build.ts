import { fileURLToPath } from 'node:url';
import { build } from 'vite';

const ROOT = fileURLToPath(new URL('.', import.meta.url));

/**
 * Builds the test page and its worker into `outDir`: a page of its own, never
 * part of the app's build, so WebLLM 0.2.79 is bundled here and only here.
 */
export async function buildKernelsPage(outDir: string): Promise<void> {
  await build({
    configFile: false,
    root: ROOT,
    base: './',
    logLevel: 'error',
    worker: { format: 'es' },
    build: { outDir, emptyOutDir: true, target: 'es2022', minify: false, reportCompressedSize: false, chunkSizeWarningLimit: 20_000 },
  });
}
