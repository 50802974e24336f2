/**
 * One model file fetched from a real host, which may compress text, redirect
 * to a CDN on another origin whose signed URLs expire, accept byte ranges,
 * drop the connection, answer 429/503 with Retry-After or stall without a
 * word. Sizes are judged only from what is known to be true: the weights
 * index for shards; for other files the body itself where a compressed
 * Content-Length could mislead.
 */
import { retryAfterMs, sleep } from '../../../core/abort';
import type { PartStore } from './model-parts';

export type DownloadErrorKind = 'not-found' | 'network' | 'offline' | 'quota' | 'invalid';

/** A download that failed, with what to do next in its message. */
export class ModelDownloadError extends Error {
  override name = 'ModelDownloadError';
  constructor(
    message: string,
    readonly kind: DownloadErrorKind,
  ) {
    super(message);
  }
}

export interface FetchTuning {
  /** Attempts in a row that bring no new bytes, after the first (default 3). */
  retries?: number;
  /** Wait before the first of those retries, doubling after each (default 1 s). */
  retryDelayMs?: number;
  /** A connection that brings no bytes for this long is dropped and asked again (default 30 s). */
  stallMs?: number;
  /** Bytes of a resumable file held in memory this long are stored as a part (default 5 s). */
  keepEveryMs?: number;
  /** The longest Retry-After waited out; a host that asks for more ends the download (default 2 min). */
  maxWaitMs?: number;
}

export interface FetchOptions extends FetchTuning {
  signal?: AbortSignal;
  fetch?: typeof fetch;
  online?(): boolean;
  /**
   * Whether the device reaches anything at all, asked once every attempt has failed with no answer: a browser may say
   * it is online when it is not (Chromium 150 in a page its service worker served offline). Default: the page's own
   * origin answers a request that no cache holds.
   */
  reachable?(): Promise<boolean>;
  /** A wait the person should know about (a busy or silent host), keyed by file; null once it is over. */
  onNotice?(key: string, text: string | null): void;
}

export interface FileRequest {
  url: string;
  /** How messages name the file: "weights file params_shard_3.bin". */
  what: string;
  /** The exact size, where the weights index lists it: then nothing else decides. */
  size?: number;
  /** Whether a body shorter than its Content-Length is whole all the same (a small file the host compressed). */
  whole?(bytes: Uint8Array): boolean;
  /** Where received bytes outlive an attempt and the tab; only files of known size resume. */
  parts?: PartStore;
}

export const STALL_MS = 30_000;
const MAX_HELD = 64 * 1024 * 1024;
const MB = 1024 * 1024;

function seconds(ms: number): string {
  return ms < 10_000 ? `${Number((ms / 1000).toFixed(1))} s` : `${Math.round(ms / 1000)} s`;
}

export function formatBytes(n: number): string {
  return n >= 1024 * MB ? `${(n / 1024 / MB).toFixed(2)} GB` : `${(n / MB).toFixed(1)} MB`;
}

export function isQuota(e: unknown): boolean {
  return (e as { name?: string } | null)?.name === 'QuotaExceededError';
}

export function quotaError(needed?: number, free?: number): ModelDownloadError {
  const amounts =
    needed !== undefined && free !== undefined
      ? ` It needs ${formatBytes(needed)} more, and this browser lets this site store only ${formatBytes(Math.max(0, free))} more.`
      : '';
  return new ModelDownloadError(
    `There is not enough storage for this model.${amounts} Choose a smaller model, or delete models you no longer need (and documents in the Library), then press Download again.`,
    'quota',
  );
}

/** `bytes <first>-<last>/<total>`; total undefined for `*`. */
export function parseContentRange(value: string | null): { first: number; last: number; total: number | undefined } | undefined {
  const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(value?.trim() ?? '');
  if (!m) return undefined;
  return { first: Number(m[1]), last: Number(m[2]), total: m[3] === '*' ? undefined : Number(m[3]) };
}

function validatorOf(res: Response): string | undefined {
  return res.headers.get('etag') ?? res.headers.get('last-modified') ?? undefined;
}

/** Something went wrong that another attempt may mend. */
class Retry extends Error {
  constructor(
    message: string,
    readonly waitMs?: number,
    /** The bytes held are not part of this file after all. */
    readonly discard = false,
  ) {
    super(message);
  }
}

const STALLED = Symbol('stalled');

async function drain(res: Response): Promise<void> {
  // Best effort: a body that cannot be cancelled is already gone.
  await res.body?.cancel().catch(() => undefined);
}

/** The bytes of one file received so far: stored parts (for a resumable file) and what is held in memory. */
class Received {
  private storedBytes = 0;
  private held: Uint8Array[] = [];
  private heldBytes = 0;
  private heldSince = 0;
  validator: string | undefined;
  /** Stored between attempts and tabs, and asked for with Range; only where the host takes ranges. */
  resumable = false;

  constructor(
    private readonly url: string,
    private readonly parts: PartStore | undefined,
    private readonly keepEveryMs: number,
  ) {}

  get size(): number {
    return this.storedBytes + this.heldBytes;
  }

  /** Parts a closed tab or an earlier attempt left. */
  async load(): Promise<void> {
    if (!this.parts) return;
    const stored = await this.parts.read(this.url);
    if (!stored.bytes) return;
    this.storedBytes = stored.bytes;
    this.validator = stored.validator;
    this.resumable = true;
  }

  /** A body from the first byte: the host's answer says whether it can be resumed. */
  begin(res: Response): void {
    this.validator = validatorOf(res);
    this.resumable = this.parts !== undefined && (/\bbytes\b/i.test(res.headers.get('accept-ranges') ?? '') || res.status === 206);
  }

  async add(chunk: Uint8Array): Promise<void> {
    if (!this.heldBytes) this.heldSince = Date.now();
    this.held.push(chunk);
    this.heldBytes += chunk.byteLength;
    if (this.resumable && (Date.now() - this.heldSince >= this.keepEveryMs || this.heldBytes >= MAX_HELD)) await this.keep();
  }

  /** Stores what is held as a part, where the file can be resumed; otherwise the next attempt starts over. */
  async keep(): Promise<void> {
    if (!this.resumable || !this.parts) {
      this.held = [];
      this.heldBytes = 0;
      return;
    }
    if (!this.heldBytes) return;
    await this.parts.write(this.url, this.storedBytes, new Blob(this.held as BlobPart[]), this.validator);
    this.storedBytes += this.heldBytes;
    this.held = [];
    this.heldBytes = 0;
  }

  async reset(): Promise<void> {
    const had = this.storedBytes > 0;
    this.storedBytes = 0;
    this.held = [];
    this.heldBytes = 0;
    if (had) await this.parts?.clearFile(this.url);
  }

  /** The whole file: the stored parts as read back from storage (not kept in memory), then what is held. */
  async blob(type: string): Promise<Blob> {
    const pieces: BlobPart[] = [];
    if (this.storedBytes) {
      const stored = await this.parts!.read(this.url);
      if (stored.bytes !== this.storedBytes) {
        await this.reset();
        throw new Retry('its stored part was lost', 0, true);
      }
      pieces.push(...stored.pieces);
    }
    pieces.push(...(this.held as BlobPart[]));
    return new Blob(pieces, { type });
  }

  heldBytesView(): Uint8Array {
    const out = new Uint8Array(this.heldBytes);
    let at = 0;
    for (const c of this.held) {
      out.set(c, at);
      at += c.byteLength;
    }
    return out;
  }
}

/**
 * Fetches one file to its end, resuming with `Range: bytes=N-` where the host
 * takes ranges, and retrying what may pass (a drop, a stall, a busy host)
 * but not what will not (404). `onBytes(held, fresh)` reports the bytes of
 * this file held so far and the bytes just received from the network.
 */
export async function fetchFile(req: FileRequest, o: FetchOptions, onBytes: (held: number, fresh: number) => void = () => undefined): Promise<Blob> {
  const doFetch = o.fetch ?? globalThis.fetch.bind(globalThis);
  const retries = o.retries ?? 3;
  const stallMs = o.stallMs ?? STALL_MS;
  const online = o.online ?? (() => globalThis.navigator?.onLine !== false);
  const reachable = o.reachable ?? originAnswers;
  const offline = () =>
    new ModelDownloadError(
      `This device is offline and ${req.what} is not downloaded yet. Connect to the network and press Download again, or choose a model that is already downloaded, or another engine.`,
      'offline',
    );
  let shown: string | null = null;
  const notice = (text: string | null) => {
    if (text !== shown) o.onNotice?.(req.url, (shown = text));
  };
  const body = new Received(req.url, req.parts, o.keepEveryMs ?? 5000);
  await body.load();
  onBytes(body.size, 0);
  // Every byte was stored as parts, but the tab closed before the file itself was.
  if (req.size !== undefined && body.size === req.size) return body.blob('application/octet-stream');
  /** Where the host redirected to (a CDN's signed URL): ranged requests go straight there until it expires. */
  let via: string | undefined;
  let attempts = 0;
  let answered = false;
  let fruitless = 0;
  let last: string;

  for (;;) {
    o.signal?.throwIfAborted();
    if (!online()) {
      await body.keep();
      throw offline();
    }
    attempts++;
    const before = body.size;
    const attempt = new AbortController();
    const signal = o.signal ? AbortSignal.any([o.signal, attempt.signal]) : attempt.signal;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const kick = () => {
      clearTimeout(timer);
      timer = setTimeout(() => attempt.abort(STALLED), stallMs);
    };
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    let waitMs: number | undefined;
    let busyStatus: number | undefined;
    let stalled: boolean;
    try {
      const target = via ?? req.url;
      const offset = body.resumable ? body.size : 0;
      const headers: Record<string, string> = offset > 0 ? { Range: `bytes=${offset}-` } : {};
      kick();
      const res = await doFetch(target, { signal, cache: 'no-store', headers });
      answered = true;
      kick();
      if (res.status === 404 || res.status === 410 || res.status === 401 || res.status === 403) {
        await drain(res);
        if (target !== req.url) {
          // A signed CDN URL has expired: the original URL hands out a fresh one.
          clearTimeout(timer);
          via = undefined;
          attempts--;
          continue;
        }
        throw new ModelDownloadError(
          `${req.what} was not found at ${req.url} (HTTP ${res.status}). Check the model URL and model library URL, then try again.`,
          'not-found',
        );
      }
      if (res.status === 416 && offset > 0) {
        await drain(res);
        throw new Retry('the host no longer has the bytes asked for', 0, true);
      }
      if (!res.ok || !res.body) {
        await drain(res);
        const wait = retryAfterMs(res.headers.get('retry-after'));
        const busy = res.status === 429 || res.status === 503;
        if (wait !== undefined && wait > (o.maxWaitMs ?? 120_000)) {
          throw new ModelDownloadError(
            `The host of ${req.what} is busy (HTTP ${res.status}) and asks to wait ${Math.ceil(wait / 60_000)} minutes before the next request. Every file finished so far is kept: press Download again later to resume.`,
            'network',
          );
        }
        if (busy) busyStatus = res.status;
        throw new Retry(busy ? `HTTP ${res.status}: the host is busy` : `HTTP ${res.status}`, wait);
      }
      if (res.redirected) via = res.url;
      if (offset > 0) {
        const range = parseContentRange(res.headers.get('content-range'));
        const length = Number(res.headers.get('content-length') ?? NaN);
        const fits = range
          ? range.first === offset && (req.size === undefined || range.total === undefined || range.total === req.size)
          : req.size !== undefined && length === req.size - offset;
        const changed = body.validator !== undefined && validatorOf(res) !== undefined && validatorOf(res) !== body.validator;
        if (res.status === 206 && (!fits || changed)) {
          await drain(res);
          throw new Retry(changed ? 'the file changed on the host' : 'the host sent another byte range', 0, true);
        }
        if (res.status !== 206) await body.reset(); // the host ignored the range: this body starts at byte 0
      } else if (res.status === 206) {
        await drain(res);
        throw new Retry('the host sent part of the file unasked');
      }
      if (body.size === 0) body.begin(res);
      reader = res.body.getReader();
      for (let first = true; ; first = false) {
        const { done, value } = await reader.read();
        if (done) break;
        kick();
        if (first) notice(null); // bytes again: the wait is over
        await body.add(value);
        kick(); // storing a part is not the host's silence
        onBytes(body.size, value.byteLength);
        if (req.size !== undefined && body.size > req.size) throw new Retry(`got more than the ${req.size} bytes the weights index lists`, 0, true);
      }
      clearTimeout(timer);
      if (req.size !== undefined) {
        if (body.size !== req.size) throw new Retry(`got ${body.size} of ${req.size} bytes`);
      } else {
        const length = Number(res.headers.get('content-length') ?? NaN);
        const encoded = !/^(identity)?$/i.test(res.headers.get('content-encoding') ?? '');
        // A compressed body arrives decoded: longer than the length sent (fine), or, for a tiny file, shorter.
        if (!encoded && Number.isFinite(length) && body.size < length && !req.whole?.(body.heldBytesView())) {
          throw new Retry(`got ${body.size} of ${length} bytes`);
        }
      }
      notice(null);
      return await body.blob(res.headers.get('content-type') ?? 'application/octet-stream');
    } catch (e) {
      clearTimeout(timer);
      void reader?.cancel().catch(() => undefined); // best effort: the attempt's failure is what matters
      stalled = attempt.signal.aborted && attempt.signal.reason === STALLED && !o.signal?.aborted;
      if (e instanceof Retry && e.discard) await body.reset();
      else await body.keep().catch((k: unknown) => (isQuota(k) ? Promise.reject(quotaError()) : undefined));
      if (o.signal?.aborted) throw o.signal.reason ?? e;
      if (e instanceof ModelDownloadError) throw e;
      if (isQuota(e)) throw quotaError();
      last = stalled ? `no data for ${seconds(stallMs)}` : e instanceof Error ? e.message : String(e);
      waitMs = e instanceof Retry ? e.waitMs : undefined;
    }
    // Bytes that arrived and were kept earn a fresh set of retries: the host is working, if fitfully.
    const progressed = body.resumable && body.size > before;
    fruitless = progressed ? 0 : fruitless + 1;
    if (fruitless > retries) break;
    const wait = waitMs ?? (progressed ? 0 : (o.retryDelayMs ?? 1000) * 2 ** (fruitless - 1));
    if (busyStatus) notice(`The host is busy (HTTP ${busyStatus}): asking again for ${req.what} in ${seconds(wait)}`);
    else if (stalled) notice(`No data for ${seconds(stallMs)} for ${req.what}: asking again${wait ? ` in ${seconds(wait)}` : ''}`);
    else if (wait >= 1000) notice(`${last} for ${req.what}: asking again in ${seconds(wait)}`);
    await sleep(wait, o.signal);
  }
  notice(null);
  if (!answered && !(await reachable())) throw offline();
  const kept = body.resumable && body.size > 0 ? `, and the ${formatBytes(body.size)} of this file received so far` : '';
  throw new ModelDownloadError(
    `The connection failed while downloading ${req.what} (${last}; tried ${attempts} times). Every file finished so far is kept${kept}: check the network and press Download again to resume.`,
    'network',
  );
}

/** Whether the page's (or worker's) own origin answers a request that no cache holds; true outside a browser. */
async function originAnswers(): Promise<boolean> {
  const origin = globalThis.location?.origin;
  if (!origin || origin === 'null') return true;
  return globalThis.fetch(`${origin}/reachable-${Date.now()}`, { method: 'HEAD', cache: 'no-store' }).then(
    () => true,
    () => false,
  );
}
