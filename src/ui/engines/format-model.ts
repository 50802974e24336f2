import type { ModelView } from '../../runner/models';

export function formatSize(bytes: number): string {
  const mb = bytes / 1024 / 1024;
  return mb >= 1024 ? `${(mb / 1024).toFixed(1)} GB` : `${mb.toFixed(mb < 10 ? 1 : 0)} MB`;
}

/**
 * Downloaded (and whether it loads with the network off), partly (with how much)
 * or not at all. WebLLM skips its cache for a model library on "localhost" or at
 * a relative URL, so such a model needs the network even when downloaded.
 */
export function cacheText(m: ModelView): string {
  if (m.cache.complete) {
    const offline = /^https?:\/\//.test(m.libUrl) && !m.libUrl.includes('localhost');
    return offline ? 'Downloaded, usable offline' : 'Downloaded (its model library is on localhost: needs the network)';
  }
  if (m.cache.partial) {
    const pct = m.cache.bytesTotal ? Math.floor((100 * m.cache.bytesCached) / m.cache.bytesTotal) : 0;
    return `Partly downloaded (${pct}%): Download resumes from there`;
  }
  return 'Not downloaded';
}

/** Size, GPU memory, context and cache state in one line. */
export function modelFacts(m: ModelView): string {
  const parts = [
    m.downloadBytes !== undefined ? `${m.exactSize ? '' : 'about '}${formatSize(m.downloadBytes)} to download` : 'size known once downloading starts',
  ];
  if (m.vramMB !== undefined) parts.push(`needs about ${(m.vramMB / 1024).toFixed(1)} GB of GPU memory`);
  if (m.contextLimit !== undefined) parts.push(`context up to ${m.contextLimit.toLocaleString('en')} tokens`);
  parts.push(cacheText(m));
  if (m.loaded) parts.push('loaded on the GPU');
  return parts.join(' · ');
}
