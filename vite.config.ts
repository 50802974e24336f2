import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';
import { pwaOptions } from './pwa.config.js';
import { cspPlugin, securityHeaders } from './csp.config.js';
import { nodeBranchImports } from './node-only.config.js';

// Cross-origin isolation gives the page SharedArrayBuffer, which llama.cpp's threads need.
const isolation = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

export default defineConfig({
  plugins: [nodeBranchImports(), react(), VitePWA(pwaOptions), cspPlugin(isolation)],
  // Workers are bundled apart, with their own plugins.
  worker: { format: 'es', plugins: () => [nodeBranchImports()], rolldownOptions: { checks: { bundlerTimings: false } } },
  build: {
    target: 'es2022',
    // WebLLM's bundle (~6 MB) only ever loads in the worker, and only for a WebGPU read.
    chunkSizeWarningLimit: 7_000,
    // The timing report is a profile of the build's plugins (the service worker's precache, the worker bundles), not a
    // problem in what is built: printed as a warning on each build, it would hide the warnings that are one.
    rolldownOptions: { checks: { bundlerTimings: false } },
  },
  // The Content Security Policy as a header as well: a <meta> tag does not reach the workers.
  // `npm start` serves at 4173 unless MEMAGENT_PORT names another port.
  preview: { host: '127.0.0.1', port: Number(process.env.MEMAGENT_PORT ?? 4173), strictPort: true, headers: { ...isolation, ...securityHeaders() } },
  server: { host: '127.0.0.1', headers: isolation },
});
