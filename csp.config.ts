import type { Plugin } from 'vite';

/**
 * The Content Security Policy: the browser itself holds the app to its own
 * origin and the model hosts, so a book cannot be sent anywhere else, whatever
 * a dependency or a hostile document tries. No third-party scripts, styles,
 * fonts, frames or analytics; no inline script; WebAssembly allowed.
 */

/** Hosts the app downloads models from: Hugging Face and the CDNs its resolve/ URLs redirect to, and WebLLM's model libraries. */
export const MODEL_HOSTS = [
  'https://huggingface.co',
  // A redirect must pass connect-src too: LFS and Xet files move to cdn-lfs*.hf.co, cas-bridge.xethub.hf.co, *.cdn.hf.co.
  'https://*.huggingface.co',
  'https://*.hf.co',
  'https://raw.githubusercontent.com',
] as const;

/** Servers on this device (llama.cpp, vLLM, Ollama, LM Studio): a book sent there stays on the device. */
export const LOCAL_HOSTS = ['http://127.0.0.1:*', 'http://localhost:*'] as const;

/** The setting, read at build and at preview: more hosts the app may connect to, separated by spaces or commas. */
export const CONNECT_SRC_ENV = 'MEMAGENT_CONNECT_SRC';

/** Extra connect-src sources from the environment; each must be an http(s) or ws(s) origin, or the build stops. */
export function extraConnectSources(value = process.env[CONNECT_SRC_ENV] ?? ''): string[] {
  const sources = value.split(/[\s,]+/).filter(Boolean);
  for (const s of sources) {
    // An origin with an optional *. and :port or :*, nothing that could end the directive or widen it to everything.
    if (!/^(https?|wss?):\/\/(\*\.)?[a-z0-9.-]+(:(\d{1,5}|\*))?\/?$/i.test(s)) {
      throw new Error(`${CONNECT_SRC_ENV}: "${s}" is not an origin such as https://models.example.org or http://192.168.1.20:8000.`);
    }
  }
  return sources.map((s) => s.replace(/\/$/, ''));
}

export interface PolicyOptions {
  /** More origins for connect-src (a custom model host, a server elsewhere). */
  connect?: readonly string[];
  /** For the HTTP header: directives that a <meta> tag may not carry (frame-ancestors). */
  header?: boolean;
}

export function contentSecurityPolicy(options: PolicyOptions = {}): string {
  const directives: [string, ...string[]][] = [
    ['default-src', "'self'"],
    // Module scripts from this origin only; compiling WebAssembly (tokenizers, pdf.js, llama.cpp, WebLLM) is not eval.
    ['script-src', "'self'", "'wasm-unsafe-eval'"],
    // llama.cpp starts its threads from blob: URLs.
    ['worker-src', "'self'", 'blob:'],
    // blob: is local: llama.cpp's wasm is handed over as one.
    ['connect-src', "'self'", 'blob:', ...MODEL_HOSTS, ...LOCAL_HOSTS, ...(options.connect ?? [])],
    ['img-src', "'self'", 'data:', 'blob:'],
    ['style-src', "'self'"],
    ['font-src', "'self'"],
    ['manifest-src', "'self'"],
    ['object-src', "'none'"],
    ['frame-src', "'none'"],
    ['base-uri', "'none'"],
    ['form-action', "'none'"],
  ];
  if (options.header) directives.push(['frame-ancestors', "'none'"]);
  return directives.map((d) => d.join(' ')).join('; ');
}

/** Headers for the preview server and static hosts: the policy, which also covers workers (a <meta> tag covers only the page). */
export function securityHeaders(connect: readonly string[] = extraConnectSources()): Record<string, string> {
  return {
    'Content-Security-Policy': contentSecurityPolicy({ connect, header: true }),
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
  };
}

/**
 * In the build only (the dev server needs inline scripts for hot reload): the
 * policy as the first <meta> of index.html, and a `_headers` file (Netlify,
 * Cloudflare Pages) so that static hosts send it, with `otherHeaders`, as headers too.
 */
export function cspPlugin(otherHeaders: Record<string, string> = {}): Plugin {
  let connect: string[] = [];
  return {
    name: 'memagent-csp',
    apply: 'build',
    configResolved() {
      connect = extraConnectSources();
    },
    transformIndexHtml(html) {
      // Right after <meta charset> (which must come within the first 1024 bytes), before any script or style.
      const tags =
        `\n    <meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy({ connect })}" />` +
        '\n    <meta name="referrer" content="no-referrer" />';
      const out = html.replace(/<meta charset=[^>]*>/i, (m) => m + tags);
      if (out === html) throw new Error('index.html has no <meta charset>: the Content Security Policy goes right after it.');
      return out;
    },
    generateBundle() {
      const lines = Object.entries({ ...otherHeaders, ...securityHeaders(connect) }).map(([k, v]) => `  ${k}: ${v}`);
      this.emitFile({ type: 'asset', fileName: '_headers', source: `/*\n${lines.join('\n')}\n` });
    },
  };
}
