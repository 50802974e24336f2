/**
 * Fills WebLLM's Cache Storage ourselves, one file at a time, under the exact
 * URLs WebLLM looks up (pinned WebLLM 0.2.86): `webllm/config` holds
 * mlc-chat-config.json, `webllm/wasm` the model library, `webllm/model`
 * tensor-cache.json (its name differs between WebLLM versions: see
 * versions.ts), every shard it lists and tokenizer.json. WebLLM then
 * loads from the cache and fetches nothing. Doing it here gives what WebLLM
 * lacks: a download cut short keeps every finished file and the received
 * part of the others and resumes from there, a quota check before gigabytes
 * are fetched, retries that survive real hosts (see model-fetch.ts), and
 * progress.
 */
import { type FetchOptions, type FetchTuning, fetchFile, formatBytes as size, isQuota, ModelDownloadError, quotaError } from './model-fetch';
import { PartStore } from './model-parts';

export { type DownloadErrorKind, ModelDownloadError } from './model-fetch';

import { SHIPPED_WEBLLM, WEIGHTS_INDEX_NAMES, type WebLLMVersion } from '../versions';

export const CACHE_NAMES = { config: 'webllm/config', wasm: 'webllm/wasm', model: 'webllm/model' } as const;

/** The weights index as the shipped WebLLM names it, and so the key it is cached under. */
export const WEIGHTS_INDEX = SHIPPED_WEBLLM.weightsIndex;

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

export interface DownloadProgress {
  /** 0..1 over the weights, which are nearly all of the bytes; never goes back. */
  fraction: number;
  text: string;
  bytesDone: number;
  bytesTotal: number;
}

export interface DownloadOptions extends Omit<FetchOptions, 'onNotice'> {
  onProgress?(p: DownloadProgress): void;
  caches?: CacheStorage;
  estimate?(): Promise<{ usage?: number; quota?: number }>;
  /** Shards fetched at once (default 3). */
  concurrency?: number;
  /** The WebLLM version that will load the files, which names the weights index (the shipped one by default). */
  webllm?: WebLLMVersion;
}

/**
 * Timings a worker can be given as `self.memagentDownloadTuning` (stallMs,
 * keepEveryMs, retryDelayMs, retries): the end-to-end tests use it so that a
 * silent host costs them seconds rather than the 30 s a download waits.
 */
export function scopeTuning(scope: unknown = globalThis): FetchTuning {
  const t = (scope as { memagentDownloadTuning?: Record<string, unknown> }).memagentDownloadTuning;
  const out: FetchTuning = {};
  for (const k of ['stallMs', 'keepEveryMs', 'retryDelayMs', 'retries', 'maxWaitMs'] as const) {
    const v = t?.[k];
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) out[k] = v;
  }
  return out;
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

function cachesOf(o: Pick<DownloadOptions, 'caches'>): CacheStorage {
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

function parsesAsJson(bytes: Uint8Array): boolean {
  try {
    JSON.parse(new TextDecoder().decode(bytes));
    return true;
  } catch {
    return false;
  }
}

const WASM_MAGIC = [0x00, 0x61, 0x73, 0x6d];

function isWasm(bytes: Uint8Array): boolean {
  return WASM_MAGIC.every((b, i) => bytes[i] === b);
}

/** One small file of a model: its cache and URL, what messages call it, its kind, a check of its bytes that throws, and its key in the cache (`url` by default). */
type CachedFile = { cacheName: string; url: string; what: string; kind: 'json' | 'wasm'; check?: (bytes: ArrayBuffer) => void; storeAs?: string };

/** A file from its cache, or fetched and put there; the bytes either way. */
async function ensureFile(file: CachedFile, o: DownloadOptions): Promise<ArrayBuffer> {
  const { cacheName, url, what, kind, check, storeAs = url } = file;
  const c = cachesOf(o);
  const hit = await cached(c, cacheName, storeAs);
  if (hit) return hit.arrayBuffer();
  // A body shorter than its Content-Length (a tiny file the host compressed) is whole when it proves itself:
  // JSON parses; a model library starts with WebAssembly's magic bytes (compiling it is WebLLM's check).
  const whole = kind === 'json' ? parsesAsJson : isWasm;
  const blob = await fetchFile({ url, what, whole }, o);
  const bytes = await blob.arrayBuffer();
  check?.(bytes);
  await put(c, cacheName, storeAs, blob);
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
  const checkConfig = (b: ArrayBuffer) => parseJson(b, what, urls.config, isObject);
  const configBytes = await ensureFile(
    { cacheName: CACHE_NAMES.config, url: urls.config, what: 'the model config (mlc-chat-config.json)', kind: 'json', check: checkConfig },
    o,
  );
  const config = parseJson<ChatConfigLike>(configBytes, what, urls.config, isObject);
  if (config.tokenizer_files && !config.tokenizer_files.includes('tokenizer.json')) {
    throw new ModelDownloadError(
      'This model has no tokenizer.json, which counting its tokens exactly needs. Convert it again with MLC, which writes one.',
      'invalid',
    );
  }
  const checkTokenizer = (b: ArrayBuffer) => parseJson(b, 'a tokenizer (tokenizer.json)', urls.tokenizer, (v) => isObject(v) && 'model' in v);
  const tokenizer = await ensureFile(
    { cacheName: CACHE_NAMES.model, url: urls.tokenizer, what: 'the tokenizer (tokenizer.json)', kind: 'json', check: checkTokenizer },
    o,
  );
  return { config, tokenizer };
}

const validIndex = (v: unknown) =>
  isObject(v) && Array.isArray(v.records) && v.records.every((r) => isObject(r) && typeof r.dataPath === 'string' && typeof r.nbytes === 'number');

/**
 * The weights index. A model converted by another MLC has the same index
 * under the other name only; it is cached under the name this WebLLM reads,
 * so WebLLM loads that model like any other.
 */
async function manifest(files: ModelFiles, o: DownloadOptions): Promise<{ records: ShardRecord[]; older: boolean }> {
  const url = fileUrls(files, o.webllm).tensorCache;
  const index = (o.webllm ?? SHIPPED_WEBLLM).weightsIndex;
  const otherIndex = WEIGHTS_INDEX_NAMES.find((n) => n !== index)!;
  const what = `the weights index (${index})`;
  const check = (at: string) => (b: ArrayBuffer) => parseJson(b, `a weights index (${index})`, at, validIndex);
  let bytes: ArrayBuffer;
  let older = false;
  try {
    bytes = await ensureFile({ cacheName: CACHE_NAMES.model, url, what, kind: 'json', check: check(url) }, o);
  } catch (e) {
    if (!(e instanceof ModelDownloadError && e.kind === 'not-found')) throw e;
    const olderUrl = new URL(otherIndex, files.modelUrl).href;
    try {
      // Kept under the name this WebLLM reads.
      const what = `the weights index (${otherIndex})`;
      bytes = await ensureFile({ cacheName: CACHE_NAMES.model, url: olderUrl, what, kind: 'json', check: check(olderUrl), storeAs: url }, o);
      older = true;
    } catch (e2) {
      if (!(e2 instanceof ModelDownloadError && e2.kind === 'not-found')) throw e2;
      throw new ModelDownloadError(
        `The model has no weights index: neither ${url} nor ${olderUrl} was found. Check that the model URL points at a model converted for WebLLM (MLC).`,
        'not-found',
      );
    }
  }
  return { records: parseJson<{ records: ShardRecord[] }>(bytes, `a weights index (${index})`, url, validIndex).records, older };
}

/**
 * Everything WebLLM loads, into its caches. Files already there are skipped
 * and parts of files resume, so calling it again after a failure, a closed
 * tab or a stop carries on where the last call ended.
 */
export async function downloadModel(files: ModelFiles, o: DownloadOptions = {}): Promise<{ bytesTotal: number; bytesFetched: number }> {
  const c = cachesOf(o);
  const parts = new PartStore(c);
  let bytesTotal = 0;
  let complete = 0;
  /** Bytes held (stored parts and memory) of each weights file under way. */
  const held = new Map<string, number>();
  const notices = new Map<string, string>();
  let shown = 0;
  let fetched = 0;
  let last = 0;
  let base = 'Checking the files already downloaded';
  const report = (text = base, force = false) => {
    base = text;
    const now = Date.now();
    if (!force && now - last < 100) return;
    last = now;
    let done = complete;
    for (const n of held.values()) done += n;
    // A file that starts over (its host ignores ranges) does not move the bar back: it waits until the bytes are there again.
    shown = Math.min(bytesTotal, Math.max(shown, done));
    const full = notices.size ? `${text} · ${[...notices.values()].join(' · ')}` : text;
    o.onProgress?.({ fraction: bytesTotal ? shown / bytesTotal : 0, text: full, bytesDone: shown, bytesTotal });
  };
  const onNotice = (key: string, text: string | null) => {
    if (text === null ? !notices.delete(key) : notices.get(key) === text) return;
    if (text !== null) notices.set(key, text);
    report(base, true);
  };
  const fetchOptions: FetchOptions = { ...o, onNotice };

  // A download resumed starts the bar where the last one left it, not at 0.
  const known = await modelCacheState(files, o);
  if (known.bytesTotal) {
    bytesTotal = known.bytesTotal;
    shown = known.bytesCached;
  }
  report(base, true);
  await ensureConfigAndTokenizer(files, fetchOptions);
  const { records, older } = await manifest(files, fetchOptions);
  bytesTotal = records.reduce((n, r) => n + r.nbytes, 0);
  const have = await keySet(c, CACHE_NAMES.model);
  const missing = records.filter((r) => !have.has(shardUrl(files, r)));
  const stored = await parts.sizes(files.modelUrl);
  // Parts of a file already stored whole: a tab closed between storing it and clearing them.
  for (const url of stored.keys()) if (have.has(url)) await parts.clearFile(url);
  for (const r of missing) held.set(shardUrl(files, r), Math.min(r.nbytes, stored.get(shardUrl(files, r)) ?? 0));
  complete = bytesTotal - missing.reduce((n, r) => n + r.nbytes, 0);
  const hasLib = Boolean(await cached(c, CACHE_NAMES.wasm, files.libUrl));

  const need = bytesTotal - complete - [...held.values()].reduce((a, b) => a + b, 0);
  const estimate = await (o.estimate ?? (() => globalThis.navigator?.storage?.estimate?.() ?? Promise.resolve({})))().catch(
    () => ({}) as { usage?: number; quota?: number },
  );
  if (estimate.quota && need > estimate.quota - (estimate.usage ?? 0)) throw quotaError(need, estimate.quota - (estimate.usage ?? 0));

  if (!hasLib) {
    report('Downloading the model library', true);
    const check = (b: ArrayBuffer) => {
      if (!isWasm(new Uint8Array(b, 0, Math.min(4, b.byteLength)))) {
        throw new ModelDownloadError(`The file at ${files.libUrl} is not a WebAssembly model library. Check the model library URL.`, 'invalid');
      }
    };
    await ensureFile({ cacheName: CACHE_NAMES.wasm, url: files.libUrl, what: 'the model library', kind: 'wasm', check }, fetchOptions);
  }
  const index = (o.webllm ?? SHIPPED_WEBLLM).weightsIndex;
  const other = WEIGHTS_INDEX_NAMES.find((n) => n !== index);
  const olderNote = older ? ` (converted by ${other === 'ndarray-cache.json' ? 'an older' : 'a newer'} MLC: its ${other} is used as ${index})` : '';
  report(missing.length ? `Downloading weights: ${size(shown)} of ${size(bytesTotal)}${olderNote}` : 'All files are downloaded', true);

  // A small pool: the first failure stops the others, whose finished files and received parts stay stored.
  const stop = new AbortController();
  const signal = o.signal ? AbortSignal.any([o.signal, stop.signal]) : stop.signal;
  const inner: FetchOptions = { ...fetchOptions, signal };
  let next = 0;
  let doneFiles = records.length - missing.length;
  let failure: unknown;
  const worker = async () => {
    while (next < missing.length && failure === undefined) {
      const r = missing[next++]!;
      const url = shardUrl(files, r);
      try {
        const blob = await fetchFile({ url, what: `weights file ${r.dataPath}`, size: r.nbytes, parts }, inner, (h, fresh) => {
          held.set(url, h);
          fetched += fresh;
          report(`Downloading weights: file ${doneFiles + 1} of ${records.length}, ${size(shown)} of ${size(bytesTotal)}${olderNote}`);
        });
        await put(c, CACHE_NAMES.model, url, blob);
        await parts.clearFile(url);
        held.delete(url);
        complete += r.nbytes;
        doneFiles++;
        report(`Downloaded ${doneFiles} of ${records.length} weight files, ${size(Math.max(shown, complete))} of ${size(bytesTotal)}${olderNote}`, true);
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
  notices.clear();
  report('All files are downloaded', true);
  return { bytesTotal, bytesFetched: fetched };
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
  const parts = await new PartStore(c).sizes(files.modelUrl);
  let all = true;
  for (const r of records) {
    const url = shardUrl(files, r);
    if (model.has(url)) state.bytesCached += r.nbytes;
    else {
      all = false;
      state.bytesCached += Math.min(r.nbytes, parts.get(url) ?? 0);
    }
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
  removed += await new PartStore(c).clearUnder(files.modelUrl);
  if (!o.keepLib && (await (await c.open(CACHE_NAMES.wasm)).delete(files.libUrl))) removed++;
  return removed;
}
