import type { TokenSpeed } from '../../../core/estimate';

/**
 * Where earlier versions kept llama.cpp's measured speeds, by model key and
 * thread count. Read while a model has no speed in IndexedDB, never written:
 * a new measurement is kept with every engine's speeds.
 */
export const LEGACY_SPEEDS_KEY = 'memagent-wllama-speed';

/** A speed an earlier version measured and kept in localStorage, if it holds one for this model and thread count. */
export function legacySpeed(storage: Pick<Storage, 'getItem'> | undefined, model: string, threads: number): TokenSpeed | undefined {
  try {
    const all = JSON.parse(storage?.getItem(LEGACY_SPEEDS_KEY) ?? 'null') as Record<string, Partial<TokenSpeed> & { measured?: boolean }> | null;
    const { prefillTokensPerSecond = 0, decodeTokensPerSecond = 0, measured } = all?.[`${model}|${threads}`] ?? {};
    if (measured !== false && prefillTokensPerSecond > 0 && decodeTokensPerSecond > 0) return { prefillTokensPerSecond, decodeTokensPerSecond };
  } catch {
    // Unreadable: as if nothing was kept.
  }
  return undefined;
}
