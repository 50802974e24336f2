import type { ModelView } from '../../../engines/webllm/manager';
import { formatNumber } from '../../format';
import { i18n } from '../../i18n';

export function formatSize(bytes: number): string {
  const mb = bytes / 1024 / 1024;
  return mb >= 1024 ? i18n.t('units.gb', { n: formatNumber(mb / 1024, 1) }) : i18n.t('units.mb', { n: formatNumber(mb, mb < 10 ? 1 : 0) });
}

/**
 * Downloaded (and whether it loads with the network off), partly (with how much)
 * or not at all. WebLLM skips its cache for a model library on "localhost" or at
 * a relative URL, so such a model needs the network even when downloaded.
 */
export function cacheText(m: ModelView): string {
  if (m.cache.complete) {
    const offline = /^https?:\/\//.test(m.libUrl) && !m.libUrl.includes('localhost');
    return offline ? i18n.t('webllm.cache.offline') : i18n.t('webllm.cache.online');
  }
  if (m.cache.partial) {
    const pct = m.cache.bytesTotal ? Math.floor((100 * m.cache.bytesCached) / m.cache.bytesTotal) : 0;
    return i18n.t('webllm.cache.partly', { pct });
  }
  return i18n.t('webllm.cache.none');
}

/** Size, GPU memory, context and cache state in one line. */
export function modelFacts(m: ModelView): string {
  const parts = [
    m.downloadBytes !== undefined
      ? i18n.t(m.exactSize ? 'webllm.toDownload' : 'webllm.aboutToDownload', { size: formatSize(m.downloadBytes) })
      : i18n.t('webllm.sizeLater'),
  ];
  if (m.vramMB !== undefined) parts.push(i18n.t('webllm.needsVram', { gb: formatNumber(m.vramMB / 1024, 1) }));
  if (m.contextLimit !== undefined) parts.push(i18n.t('webllm.context', { tokens: formatNumber(m.contextLimit) }));
  parts.push(cacheText(m));
  if (m.loaded) parts.push(i18n.t('webllm.loaded'));
  return parts.join(' · ');
}
