/**
 * Fills WebLLM's Cache Storage ourselves, one file at a time, under the exact
 * URLs WebLLM looks up (pinned WebLLM 0.2.86): `webllm/config` holds
 * mlc-chat-config.json, `webllm/wasm` the model library, `webllm/model`
 * tensor-cache.json (its name differs between WebLLM versions: see
 * webllm-versions.ts), every shard it lists and tokenizer.json. WebLLM then
 * loads from the cache and fetches nothing. Doing it here gives what WebLLM
 * lacks: a download cut short keeps every finished file and resumes from
 * there, a quota check before gigabytes are fetched, retries, and progress.
 */

import { SHIPPED_WEBLLM, type WebLLMVersion } from './webllm-versions';

export const CACHE_NAMES = { config: 'webllm/config', wasm: 'webllm/wasm', model: 'webllm/model' } as const;

export interface ModelFiles {
  /** Ends in `resolve/<branch>/` (see cleanModelUrl). */
  modelUrl: string;
  libUrl: string;
}

interface ShardRecord {
  dataPath: string;
  nbytes: number;
}

export interface ChatConfigLike {
  tokenizer_files?: string[];
  context_window_size?: number;
  quantization?: string;
  conv_template?: unknown;
}

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

export interface DownloadProgress {
  /** 0..1 over the weights, which are nearly all of the bytes. */
  fraction: number;
  text: string;
  bytesDone: number;
  bytesTotal: number;
}

export interface DownloadOptions {
  signal?: AbortSignal;
  onProgress?(p: DownloadProgress): void;
  fetch?: typeof fetch;
  caches?: CacheStorage;
  estimate?(): Promise<{ usage?: number; quota?: number }>;
  online?(): boolean;
  /** Attempts after the first for a file that fails on the way (default 3). */
  retries?: number;
  retryDelayMs?: number;
  /** Shards fetched at once (default 3). */
  concurrency?: number;
  /** The WebLLM version that will load the files, which names the weights index (the shipped one by default). */
  webllm?: WebLLMVersion;
}

export function fileUrls(files: ModelFiles, webllm: WebLLMVersion = SHIPPED_WEBLLM) {
  return {
    config: new URL('mlc-chat-config.json', files.modelUrl).href,
    tensorCache: new URL(webllm.weightsIndex, files.modelUrl).href,
    tokenizer: new URL('tokenizer.json', files.modelUrl).href,
  };
}

function shardUrl(files: ModelFiles, r: ShardRecord): string {
  return new URL(r.dataPath, files.modelUrl).href;
}

const MB = 1024 * 1024;
function size(n: number): string {
  return n >= 1024 * MB ? `${(n / 1024 / MB).toFixed(2)} GB` : `${(n / MB).toFixed(1)} MB`;
}

function cachesOf(o: DownloadOptions): CacheStorage {
  const c = o.caches ?? globalThis.caches;
  if (!c) throw new ModelDownloadError('This browser offers no Cache Storage here (it needs https or localhost), so models cannot be stored.', 'invalid');
  return c;
}

async function cached(c: CacheStorage, name: string, url: string): Promise<Response | undefined> {
  return (await c.open(name)).match(url);
}

async function keySet(c: CacheStorage, name: string): Promise<Set<string>> {
  return new Set((await (await c.open(name)).keys()).map((r) => r.url));
}

function isQuota(e: unknown): boolean {
  return (e as { name?: string } | null)?.name === 'QuotaExceededError';
}

function quotaError(needed?: number, free?: number): ModelDownloadError {
  const amounts = needed !== undefined && free !== undefined ? ` It needs ${size(needed)} more, and this browser lets this site store only ${size(Math.max(0, free))} more.` : '';
  return new ModelDownloadError(
    `There is not enough storage for this model.${amounts} Choose a smaller model, or delete models you no longer need (and documents in the Library), then press Download again.`,
    'quota',
  );
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });
}

/**
 * One file, read to its end and checked, with retries for what may pass (a
 * dropped connection, a busy server) and none for what will not (404).
 */
async function fetchWhole(
  url: string,
  what: string,
  o: DownloadOptions,
  expected: number | undefined,
  onBytes: (n: number) => void,
): Promise<Blob> {
  const doFetch = o.fetch ?? globalThis.fetch.bind(globalThis);
  const retries = o.retries ?? 3;
  const online = o.online ?? (() => globalThis.navigator?.onLine !== false);
  let last = '';
  for (let attempt = 0; ; attempt++) {
    o.signal?.throwIfAborted();
    let received = 0;
    try {
      if (!online()) {
        throw new ModelDownloadError(
          `This device is offline and ${what} is not downloaded yet. Connect to the network and press Download again, or choose a model that is already downloaded, or another engine.`,
          'offline',
        );
      }
      const res = await doFetch(url, { signal: o.signal, cache: 'no-store' });
      if (res.status === 404 || res.status === 410 || res.status === 401 || res.status === 403) {
        throw new ModelDownloadError(
          `${what} was not found at ${url} (HTTP ${res.status}). Check the model URL and model library URL, then try again.`,
          'not-found',
        );
      }
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
      const parts: Uint8Array[] = [];
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parts.push(value);
        received += value.byteLength;
        onBytes(value.byteLength);
      }
      const length = Number(res.headers.get('content-length') ?? NaN);
      const want = expected ?? (Number.isFinite(length) ? length : undefined);
      if (want !== undefined && received !== want) throw new Error(`got ${received} of ${want} bytes`);
      return new Blob(parts as BlobPart[], { type: res.headers.get('content-type') ?? 'application/octet-stream' });
    } catch (e) {
      onBytes(-received); // what this attempt counted is fetched again
      if (e instanceof ModelDownloadError || o.signal?.aborted) throw e;
      last = e instanceof Error ? e.message : String(e);
      if (attempt >= retries) break;
      await sleep((o.retryDelayMs ?? 1000) * 2 ** attempt, o.signal);
    }
  }
  throw new ModelDownloadError(
    `The connection failed while downloading ${what} (${last}; tried ${retries + 1} times). Every file finished so far is kept: check the network and press Download again to resume.`,
    'network',
  );
}

/** A file from its cache, or fetched and put there; the bytes either way. */
async function ensureFile(
  cacheName: string,
  url: string,
  what: string,
  o: DownloadOptions,
  check?: (bytes: ArrayBuffer) => void,
): Promise<ArrayBuffer> {
  const c = cachesOf(o);
  const hit = await cached(c, cacheName, url);
  if (hit) return hit.arrayBuffer();
  const blob = await fetchWhole(url, what, o, undefined, () => undefined);
  const bytes = await blob.arrayBuffer();
  check?.(bytes);
  await put(c, cacheName, url, blob);
  return bytes;
}

async function put(c: CacheStorage, cacheName: string, url: string, blob: Blob): Promise<void> {
  try {
    const headers = { 'Content-Type': blob.type || 'application/octet-stream', 'Content-Length': String(blob.size) };
    await (await c.open(cacheName)).put(url, new Response(blob, { status: 200, headers }));
  } catch (e) {
    if (isQuota(e)) throw quotaError();
    throw e;
  }
}

function parseJson<T>(bytes: ArrayBuffer, what: string, url: string, valid: (v: unknown) => boolean): T {
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    v = undefined;
  }
  if (!valid(v)) {
    throw new ModelDownloadError(`The file at ${url} is not ${what}. Check that the model URL points at a model converted for WebLLM (MLC).`, 'invalid');
  }
  return v as T;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** mlc-chat-config.json and tokenizer.json: what planning a run needs, a few megabytes and no weights. */
export async function ensureConfigAndTokenizer(files: ModelFiles, o: DownloadOptions = {}): Promise<{ config: ChatConfigLike; tokenizer: ArrayBuffer }> {
  const urls = fileUrls(files);
  const what = 'a model config (mlc-chat-config.json)';
  const configBytes = await ensureFile(CACHE_NAMES.config, urls.config, 'the model config (mlc-chat-config.json)', o, (b) => parseJson(b, what, urls.config, isObject));
  const config = parseJson<ChatConfigLike>(configBytes, what, urls.config, isObject);
  if (config.tokenizer_files && !config.tokenizer_files.includes('tokenizer.json')) {
    throw new ModelDownloadError('This model has no tokenizer.json, which counting its tokens exactly needs. Convert it again with MLC, which writes one.', 'invalid');
  }
  const tokenizer = await ensureFile(CACHE_NAMES.model, urls.tokenizer, 'the tokenizer (tokenizer.json)', o, (b) =>
    parseJson(b, 'a tokenizer (tokenizer.json)', urls.tokenizer, (v) => isObject(v) && 'model' in v),
  );
  return { config, tokenizer };
}

async function manifest(files: ModelFiles, o: DownloadOptions): Promise<ShardRecord[]> {
  const url = fileUrls(files, o.webllm).tensorCache;
  const index = (o.webllm ?? SHIPPED_WEBLLM).weightsIndex;
  const valid = (v: unknown) =>
    isObject(v) && Array.isArray(v.records) && v.records.every((r) => isObject(r) && typeof r.dataPath === 'string' && typeof r.nbytes === 'number');
  const bytes = await ensureFile(CACHE_NAMES.model, url, `the weights index (${index})`, o, (b) => parseJson(b, `a weights index (${index})`, url, valid));
  return parseJson<{ records: ShardRecord[] }>(bytes, `a weights index (${index})`, url, valid).records;
}

/**
 * Everything WebLLM loads, into its caches. Files already there are skipped,
 * so calling it again after a failure, a closed tab or a cancel resumes.
 */
export async function downloadModel(files: ModelFiles, o: DownloadOptions = {}): Promise<{ bytesTotal: number; bytesFetched: number }> {
  const c = cachesOf(o);
  let bytesDone = 0;
  let bytesTotal = 0;
  let last = 0;
  const report = (text: string, force = false) => {
    const now = Date.now();
    if (!force && now - last < 100) return;
    last = now;
    o.onProgress?.({ fraction: bytesTotal ? Math.min(1, bytesDone / bytesTotal) : 0, text, bytesDone, bytesTotal });
  };
  report('Checking the files already downloaded', true);
  await ensureConfigAndTokenizer(files, o);
  const records = await manifest(files, o);
  bytesTotal = records.reduce((n, r) => n + r.nbytes, 0);
  const have = await keySet(c, CACHE_NAMES.model);
  const missing = records.filter((r) => !have.has(shardUrl(files, r)));
  bytesDone = bytesTotal - missing.reduce((n, r) => n + r.nbytes, 0);
  const hasLib = Boolean(await cached(c, CACHE_NAMES.wasm, files.libUrl));

  const need = bytesTotal - bytesDone;
  const estimate = await (o.estimate ?? (() => globalThis.navigator?.storage?.estimate?.() ?? Promise.resolve({})))().catch(() => ({}) as { usage?: number; quota?: number });
  if (estimate.quota && need > estimate.quota - (estimate.usage ?? 0)) throw quotaError(need, estimate.quota - (estimate.usage ?? 0));

  if (!hasLib) {
    report('Downloading the model library', true);
    await ensureFile(CACHE_NAMES.wasm, files.libUrl, 'the model library', o);
  }
  report(missing.length ? `Downloading weights: ${size(bytesDone)} of ${size(bytesTotal)}` : 'All files are downloaded', true);

  // A small pool: the first failure stops the others, whose finished files stay cached.
  const stop = new AbortController();
  const signal = o.signal ? AbortSignal.any([o.signal, stop.signal]) : stop.signal;
  const inner = { ...o, signal };
  let next = 0;
  let doneFiles = records.length - missing.length;
  let failure: unknown;
  const worker = async () => {
    while (next < missing.length && failure === undefined) {
      const r = missing[next++]!;
      const url = shardUrl(files, r);
      try {
        const blob = await fetchWhole(url, `weights file ${r.dataPath}`, inner, r.nbytes, (n) => {
          bytesDone += n;
          report(`Downloading weights: file ${doneFiles + 1} of ${records.length}, ${size(bytesDone)} of ${size(bytesTotal)}`);
        });
        await put(c, CACHE_NAMES.model, url, blob);
        doneFiles++;
        report(`Downloaded ${doneFiles} of ${records.length} weight files, ${size(bytesDone)} of ${size(bytesTotal)}`, true);
      } catch (e) {
        failure ??= e;
        stop.abort();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency ?? 3, missing.length)) }, worker));
  if (failure !== undefined) {
    if (o.signal?.aborted) throw o.signal.reason ?? failure;
    throw failure;
  }
  report('All files are downloaded', true);
  return { bytesTotal, bytesFetched: need };
}

export interface CacheState {
  /** Every file WebLLM loads is cached: the model loads with no network. */
  complete: boolean;
  /** Some files are cached: a download was started. */
  partial: boolean;
  bytesCached: number;
  /** Known once tensor-cache.json is cached. */
  bytesTotal?: number;
}

export async function modelCacheState(files: ModelFiles, o: Pick<DownloadOptions, 'caches' | 'webllm'> = {}): Promise<CacheState> {
  const c = cachesOf(o);
  const urls = fileUrls(files, o.webllm);
  const [model, config, lib] = await Promise.all([
    keySet(c, CACHE_NAMES.model),
    cached(c, CACHE_NAMES.config, urls.config),
    cached(c, CACHE_NAMES.wasm, files.libUrl),
  ]);
  const state: CacheState = { complete: false, partial: Boolean(config || lib || model.has(urls.tokenizer)), bytesCached: 0 };
  if (!model.has(urls.tensorCache)) return state;
  state.partial = true;
  const index = await cached(c, CACHE_NAMES.model, urls.tensorCache);
  const records = ((await index!.json().catch(() => ({}))) as { records?: ShardRecord[] }).records ?? [];
  state.bytesTotal = records.reduce((n, r) => n + r.nbytes, 0);
  let all = true;
  for (const r of records) {
    if (model.has(shardUrl(files, r))) state.bytesCached += r.nbytes;
    else all = false;
  }
  state.complete = all && Boolean(config && lib) && model.has(urls.tokenizer);
  return state;
}

/** Removes a model's files from WebLLM's caches; `keepLib` when another cached model shares its library. */
export async function deleteModelFiles(files: ModelFiles, o: Pick<DownloadOptions, 'caches'> & { keepLib?: boolean } = {}): Promise<number> {
  const c = cachesOf(o);
  let removed = 0;
  // By prefix, not by tensor-cache.json: a download cut short before the index still left files.
  for (const name of [CACHE_NAMES.model, CACHE_NAMES.config]) {
    const cache = await c.open(name);
    for (const req of await cache.keys()) {
      if (req.url.startsWith(files.modelUrl) && (await cache.delete(req))) removed++;
    }
  }
  if (!o.keepLib && (await (await c.open(CACHE_NAMES.wasm)).delete(files.libUrl))) removed++;
  return removed;
}
