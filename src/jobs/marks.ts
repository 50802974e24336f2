/**
 * Marks on the worker's performance timeline, named `memagent:<stage>`: where
 * an import and the start of a read spend their time, for DevTools'
 * Performance panel and the benchmarks. Only the latest import's and read's
 * marks are kept.
 */
export function mark(stage: string, startsOver = false): void {
  if (typeof performance === 'undefined' || !performance.mark) return;
  if (startsOver)
    for (const m of performance.getEntriesByType('mark')) if (m.name.startsWith(`memagent:${stage.split('-')[0]}-`)) performance.clearMarks(m.name);
  performance.mark(`memagent:${stage}`);
}
