import type { TokenizerConfigLike } from './system-message';
import { cleanModelUrl } from './models';

/** Cache Storage for models' tokenizer_config.json: read once online, then offline too. */
export const TOKENIZER_CONFIG_CACHE = 'memagent-tokenizer-config';

/**
 * A model's tokenizer_config.json from `<modelUrl>/resolve/main/`, kept in
 * Cache Storage; undefined where the model ships none or it cannot be had now
 * (offline and never read): the caller then decides without it.
 */
export async function fetchTokenizerConfig(
  modelUrl: string,
  caches: CacheStorage | undefined = globalThis.caches,
  fetchImpl: typeof fetch = (input, init) => fetch(input, init),
): Promise<TokenizerConfigLike | undefined> {
  let url: string;
  try {
    url = new URL('tokenizer_config.json', cleanModelUrl(modelUrl)).href;
  } catch {
    return undefined;
  }
  const read = async (r: Response) => {
    const json = (await r.json()) as unknown;
    return json && typeof json === 'object' ? (json as TokenizerConfigLike) : undefined;
  };
  try {
    const cache = await caches?.open(TOKENIZER_CONFIG_CACHE);
    const hit = await cache?.match(url);
    if (hit) return await read(hit);
    const response = await fetchImpl(url, { signal: AbortSignal.timeout(15_000) });
    if (!response.ok) return undefined;
    const config = await read(response.clone());
    // A cache that refuses the copy (full, private mode) only means it is fetched again next time.
    if (config) await cache?.put(url, response).catch(() => undefined);
    return config;
  } catch {
    return undefined;
  }
}
