/**
 * A dataset evaluation's results by each method that read its items: each
 * method's items apart, the two compared per file, and the report as
 * `memagent eval --data --method infmem|both --json` writes it (one
 * method's report, InfMem's with its early stop and thinking; with both,
 * each method's report and the comparison).
 */
import { compareMethods, type ComparisonRow, itemRun } from './compare';
import { datasetReport, type DatasetReport, type FileResults, type PromptsUsed, summarizeFiles } from './dataset-report';
import type { EvalMethod } from './infmem-read';
import type { ItemResult, MethodId } from './method';

/** An item as stored: the method that read it, MemAgent's where it says none. */
export type MethodItem = ItemResult & { method?: EvalMethod };

/** A dataset file as the evaluation lists it. */
export interface DatasetFile {
  name: string;
  numDocs: number | null;
  items?: number;
}

export const methodOfItem = (item: MethodItem): EvalMethod => item.method ?? 'memagent';

/** Each method's results by file, in the order the methods read. */
export function filesByMethod(
  methods: readonly EvalMethod[],
  files: readonly DatasetFile[],
  items: readonly MethodItem[],
): { method: EvalMethod; files: FileResults[] }[] {
  return methods.map((method) => ({
    method,
    files: summarizeFiles(
      files,
      items.filter((i) => methodOfItem(i) === method),
    ),
  }));
}

/** The methods side by side per file; accuracy is the paper's sub_em. */
export function datasetComparison(files: readonly DatasetFile[], items: readonly MethodItem[]): ComparisonRow[] {
  return compareMethods(
    items.map((i) => itemRun(methodOfItem(i), i)),
    files.map((f) => f.name),
  );
}

export interface DatasetExportInput {
  byMethod: readonly { method: EvalMethod; files: readonly FileResults[] }[];
  /** MemAgent's paper method (recurrent or recurrent-boxed). */
  memagentMethod: MethodId;
  prompts: PromptsUsed;
  infmem?: { earlyStop: number; thinking: boolean };
  comparison: readonly ComparisonRow[];
}

export type DatasetExport = DatasetReport | { methods: EvalMethod[]; reports: DatasetReport[]; comparison: ComparisonRow[] };

/** What the export holds: one method's report, or with both each method's report and their comparison. */
export function datasetExport(input: DatasetExportInput): DatasetExport {
  const reports = input.byMethod.map(({ method, files }) => {
    const report = datasetReport(method === 'infmem' ? 'infmem' : input.memagentMethod, input.prompts, files);
    return method === 'infmem' && input.infmem ? { ...report, ...input.infmem } : report;
  });
  if (reports.length === 1) return reports[0]!;
  return { methods: input.byMethod.map((m) => m.method), reports, comparison: [...input.comparison] };
}
