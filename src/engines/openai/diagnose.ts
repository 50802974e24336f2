import { CorsError, ServerUnreachableError } from '../errors';

/*
 * Why a fetch to the server failed without a response: the server is
 * unreachable, or the browser withheld its reply (CORS, mixed content, this
 * app's Content Security Policy).
 */

/** Origins the page's Content Security Policy kept this page (or worker) from connecting to, as the browser reported them. */
const refusedByPolicy = new Set<string>();
let listening = false;

/**
 * Starts hearing the browser's reports of connections its policy refused
 * (once; nothing happens on import). Called before the first request to a
 * server, since a report arrives only while someone listens.
 */
export function listenForPolicyRefusals(): void {
  if (listening || typeof SecurityPolicyViolationEvent === 'undefined' || typeof addEventListener !== 'function') return;
  listening = true;
  addEventListener('securitypolicyviolation', (event) => {
    const e = event as SecurityPolicyViolationEvent;
    if (e.effectiveDirective !== 'connect-src') return;
    try {
      refusedByPolicy.add(new URL(e.blockedURI).origin);
    } catch {
      // not a URL ("inline", "eval"): nothing to do with servers
    }
  });
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || /^127\./.test(host);
}

/** What to set on each kind of server so that a page on `origin` may read its replies. */
function corsAdvice(origin: string): string {
  return (
    `Start the server with this origin allowed — vLLM: --allowed-origins '["${origin}"]'; Ollama: OLLAMA_ORIGINS=${origin}; ` +
    `llama.cpp's llama-server allows any origin unless a proxy in front of it drops the Access-Control-Allow-Origin header — then Connect again.`
  );
}

export interface FailedFetch {
  /** What fetch threw. */
  error: unknown;
  baseUrl: string;
  fetchImpl: typeof fetch;
  /** Whether the browser may be the one refusing (until one request has gone through). */
  checkCors: boolean;
}

/**
 * A fetch that failed without a response. In a browser that is either an
 * unreachable server or a reply the browser withheld (CORS, mixed content);
 * a no-cors request, which succeeds whenever the server answers at all, tells
 * them apart — except on a cross-origin-isolated page, where such a request
 * is blocked too unless the server sends Cross-Origin-Resource-Policy: then
 * the message names both causes.
 */
export async function explainFailure({ error, baseUrl, fetchImpl, checkCors }: FailedFetch): Promise<Error> {
  const cause = error instanceof Error ? error.message : String(error);
  const unreachable = new ServerUnreachableError(`Could not reach the server at ${baseUrl} (${cause}). Check that it is running and the address is right.`, {
    cause: error,
  });
  const here = globalThis as { location?: { origin?: string; protocol?: string }; crossOriginIsolated?: boolean };
  const origin = here.location?.origin;
  // Only pages and workers have an origin; node reports the network error itself.
  if (!checkCors || !origin || origin === 'null') return unreachable;
  const target = new URL(baseUrl);
  if (target.origin === origin) return unreachable;
  if (here.location?.protocol === 'https:' && target.protocol === 'http:' && !isLoopback(target.hostname)) {
    return new CorsError(
      `This page was opened over https, so the browser will not call the plain-http server at ${target.origin}. Serve the model over https (behind a reverse proxy) or open the app over http.`,
      { cause: error },
    );
  }
  let answered = true;
  try {
    await fetchImpl(`${baseUrl}/models`, { mode: 'no-cors', cache: 'no-store' });
  } catch {
    answered = false;
  }
  // The violation report is an event of its own; by now it has been dispatched.
  await new Promise((resolve) => setTimeout(resolve, 0));
  if (refusedByPolicy.has(target.origin)) {
    return new CorsError(
      `This app's Content Security Policy does not let it connect to ${target.origin}: it may reach its own origin, the model hosts and servers on this device (127.0.0.1, localhost). ` +
        `Make the server reachable on this device (for example through an SSH tunnel: ssh -L 8000:127.0.0.1:8000 <server>, then use http://127.0.0.1:8000/v1), ` +
        `or serve the app built with MEMAGENT_CONNECT_SRC=${target.origin}.`,
      { cause: error },
    );
  }
  if (!answered) {
    if (!here.crossOriginIsolated) return unreachable;
    return new ServerUnreachableError(
      `No answer the browser could read came from ${target.origin} (${cause}). Either no server is running at ${baseUrl}, ` +
        `or it does not allow requests from this page's origin, ${origin} (CORS). Check the address; if the server is running, ${corsAdvice(origin).replace(/^S/, 's')}`,
      { cause: error },
    );
  }
  return new CorsError(
    `The server at ${target.origin} answered, but the browser withheld its reply: it does not allow requests from this page's origin, ${origin} (CORS). ${corsAdvice(origin)}`,
    { cause: error },
  );
}
