/**
 * The GGUF models this browser keeps for the llama.cpp engine: those
 * downloaded from a URL (in wllama's own cache, in the origin's private file
 * system) and those copied from files picked on this device.
 */
import { modelKey } from '../../core/estimate';
import { LOCAL_MODEL_DIR } from './models';

export interface StoredModel {
  /** `download:<url of the first part>` or `file:<key>`, for deletion. */
  id: string;
  /** The model as a read's engine config names it (`modelKey`): its measured speeds are kept under it. */
  model: string;
  /** The file name, with the number of parts for a split model. */
  name: string;
  /** The host it came from, or "a file on this device". */
  origin: string;
  bytes: number;
  /** False for a download cut short or a copy not finished: the next load fetches or copies it again. */
  complete: boolean;
}

/** What is read of wllama's cache (its CacheManager). */
export interface DownloadCache {
  list(): Promise<{ name: string; size: number; metadata: { originalURL: string; originalSize: number } }[]>;
  deleteMany(predicate: (entry: { name: string; metadata: { originalURL: string } }) => boolean): Promise<void>;
}

const PART = /-(\d{5})-of-(\d{5})\.gguf$/i;

/** The URL a split model is known by: its first part's. */
function modelUrl(url: string): string {
  const m = PART.exec(url);
  return m ? url.replace(PART, `-00001-of-${m[2]}.gguf`) : url;
}

function fileName(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.split('/').pop() || url);
  } catch {
    return url;
  }
}

function host(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'an unknown host';
  }
}

function partsLabel(name: string, parts: number): string {
  return parts > 1 ? `${name} (${parts} parts)` : name;
}

/** Downloads as models: a split model's parts are one entry, complete when every part is there whole. */
export function groupDownloads(entries: Awaited<ReturnType<DownloadCache['list']>>): StoredModel[] {
  const groups = new Map<string, { parts: number; expected: number; bytes: number; whole: boolean }>();
  for (const e of entries) {
    const url = e.metadata.originalURL || e.name;
    const key = modelUrl(url);
    const group = groups.get(key) ?? { parts: 0, expected: Number(PART.exec(url)?.[2] ?? 1), bytes: 0, whole: true };
    group.parts++;
    group.bytes += e.size;
    if (e.size !== e.metadata.originalSize) group.whole = false;
    groups.set(key, group);
  }
  return [...groups].map(([url, g]) => ({
    id: `download:${url}`,
    model: modelKey({ modelUrl: url }),
    name: partsLabel(fileName(url), g.expected),
    origin: host(url),
    bytes: g.bytes,
    complete: g.whole && g.parts === g.expected,
  }));
}

async function localFolder(): Promise<FileSystemDirectoryHandle | null> {
  try {
    return await (await navigator.storage.getDirectory()).getDirectoryHandle(LOCAL_MODEL_DIR);
  } catch {
    return null;
  }
}

type Entries = AsyncIterable<[string, FileSystemHandle]>;

/** Copies of picked files, one folder each (see saveLocalModel). */
async function localModels(): Promise<StoredModel[]> {
  const folder = await localFolder();
  if (!folder) return [];
  const models: StoredModel[] = [];
  for await (const [key, handle] of folder as unknown as Entries) {
    if (handle.kind !== 'directory') continue;
    const names: string[] = [];
    let bytes = 0;
    let complete = false;
    for await (const [name, file] of handle as unknown as Entries) {
      if (file.kind !== 'file') continue;
      if (name === '.complete') complete = true;
      else if (name.toLowerCase().endsWith('.gguf')) {
        names.push(name);
        bytes += (await (file as FileSystemFileHandle).getFile()).size;
      }
    }
    names.sort();
    models.push({
      id: `file:${key}`,
      model: modelKey({ localModel: key }),
      name: partsLabel(names[0] ?? key, names.length),
      origin: 'a file on this device',
      bytes,
      complete,
    });
  }
  return models;
}

async function downloadCache(): Promise<DownloadCache> {
  const { CacheManager } = await import('@wllama/wllama');
  return new CacheManager() as unknown as DownloadCache;
}

export async function listStoredModels(cache?: DownloadCache): Promise<StoredModel[]> {
  const downloads = groupDownloads(await (cache ?? (await downloadCache())).list().catch(() => []));
  return [...downloads, ...(await localModels())].sort((a, b) => a.name.localeCompare(b.name));
}

/** Deletes every part of a stored model; the next read with it downloads or asks for the file again. */
export async function deleteStoredModel(id: string, cache?: DownloadCache): Promise<void> {
  if (id.startsWith('download:')) {
    const url = id.slice('download:'.length);
    await (cache ?? (await downloadCache())).deleteMany((e) => modelUrl(e.metadata.originalURL || e.name) === url);
    return;
  }
  if (id.startsWith('file:')) {
    const folder = await localFolder();
    await folder?.removeEntry(id.slice('file:'.length), { recursive: true });
    return;
  }
  throw new Error(`No stored model "${id}".`);
}
