import type { VitePWAOptions } from 'vite-plugin-pwa';

/** Cache Storage names WebLLM keeps its model files in; the service worker never touches them. */
export const WEBLLM_CACHES = ['webllm/config', 'webllm/wasm', 'webllm/model'] as const;

/**
 * The installable app: a manifest, and a service worker that precaches
 * everything the build emits (app shell, the agent worker, the tokenizer
 * chunk, the PDF worker, wasm and fonts) so that a book can be read with no
 * network. Nothing else is cached: requests for model weights and anything
 * cross-origin go straight to the network, and WebLLM manages its own caches.
 */
export const pwaOptions: Partial<VitePWAOptions> = {
  // A new version waits until the person presses Update, so a run is never cut short by a deploy.
  registerType: 'prompt',
  // Registered by the app itself (src/ui/AppUpdate.tsx), which shows the Update button.
  injectRegister: false,
  strategies: 'generateSW',
  manifestFilename: 'manifest.webmanifest',
  manifest: {
    name: 'memagent-web',
    short_name: 'memagent',
    description: 'Ask questions about a whole book with a language model that reads it chunk by chunk, privately, in your browser.',
    id: '/',
    start_url: '/',
    scope: '/',
    display: 'standalone',
    background_color: '#ffffff',
    theme_color: '#2f6fde',
    icons: [
      { src: 'icons/icon-192.png', sizes: '192x192', type: 'image/png' },
      { src: 'icons/icon-512.png', sizes: '512x512', type: 'image/png' },
      { src: 'icons/maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
      { src: 'favicon.svg', sizes: 'any', type: 'image/svg+xml' },
    ],
  },
  // The glob below already takes the icons; listing them twice would duplicate precache entries.
  includeManifestIcons: false,
  workbox: {
    globPatterns: ['**/*.{html,js,mjs,css,wasm,svg,png,ico,woff,woff2,ttf}'],
    // llama.cpp's two wasm builds (10 and 19 MB) are cached by its engine on first use, and only the one this browser needs.
    globIgnores: ['**/wllama-*.wasm'],
    // Above the default 2 MiB: WebLLM's tokenizer library (~4.7 MB) and its bundle (~6 MB)
    // must be stored for reading offline.
    maximumFileSizeToCacheInBytes: 16 * 1024 * 1024,
    // Every route is the one page (hash routes), so any navigation offline gets index.html.
    navigateFallback: 'index.html',
    // Only this app's own outdated precaches are removed; caches named otherwise (WebLLM's) are left alone.
    cleanupOutdatedCaches: true,
    // No runtime caching on purpose: a multi-gigabyte model file must not be copied into a cache of ours.
    runtimeCaching: [],
    // A click on the notification that a long read ended brings its tab back (public/notification-click.js).
    importScripts: ['notification-click.js'],
  },
};
