/**
 * The GGUF models this browser keeps for the llama.cpp engine: those
 * downloaded from a URL (in wllama's own cache: the origin's private file
 * system, or where there is none Cache Storage or memory, see model-stores.ts)
 * and those copied from files picked on this device.
 */
import type { CacheManager } from '@wllama/wllama';
import { modelKey } from '../../core/estimate';
import { DOWNLOADS, fallbackStore, modelStorageKind } from './model-stores';
import { folderContents, type PickedShelf, pickedShelf } from './picked-models';

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

/** Copies of picked files, one folder each (see picked-models.ts). */
async function localModels(shelf: PickedShelf): Promise<StoredModel[]> {
  const models: StoredModel[] = [];
  for (const key of await shelf.keys()) {
    const folder = await shelf.folder(key, false);
    if (!folder) continue;
    const { files, complete } = await folderContents(folder);
    models.push({
      id: `file:${key}`,
      model: modelKey({ localModel: key }),
      name: partsLabel(files[0]?.name ?? key, files.length),
      origin: 'a file on this device',
      bytes: files.reduce((n, f) => n + f.size, 0),
      complete,
    });
  }
  return models;
}

/** wllama's cache of downloads, in the private file system, or where there is none in Cache Storage (or memory). */
export async function downloadCache(): Promise<CacheManager> {
  const { CacheManager } = await import('@wllama/wllama');
  const kind = await modelStorageKind();
  return kind === 'opfs' ? new CacheManager() : new CacheManager([fallbackStore(DOWNLOADS, kind)]);
}

export async function listStoredModels(cache?: DownloadCache, shelf?: PickedShelf): Promise<StoredModel[]> {
  const downloads = groupDownloads(await (cache ?? ((await downloadCache()) as unknown as DownloadCache)).list().catch(() => []));
  return [...downloads, ...(await localModels(shelf ?? (await pickedShelf())))].sort((a, b) => a.name.localeCompare(b.name));
}

/** Deletes every part of a stored model; the next read with it downloads or asks for the file again. */
export async function deleteStoredModel(id: string, cache?: DownloadCache, shelf?: PickedShelf): Promise<void> {
  if (id.startsWith('download:')) {
    const url = id.slice('download:'.length);
    await (cache ?? ((await downloadCache()) as unknown as DownloadCache)).deleteMany((e) => modelUrl(e.metadata.originalURL || e.name) === url);
    return;
  }
  if (id.startsWith('file:')) {
    await (shelf ?? (await pickedShelf())).remove(id.slice('file:'.length));
    return;
  }
  throw new Error(`No stored model "${id}".`);
}
