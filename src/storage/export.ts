import * as v from 'valibot';
import { bookAt, bookName } from '../core/book-set';
import { isEmptyStart } from '../core/prompts';
import { type FollowUpRecord, type MemoryRecord, type RevisionRecord, RUN_ANSWER, type RunRecord, SHA256_HEX, type SourcesRecord } from './schema';

/**
 * The shareable form of a run: settings, templates, every revision with its
 * memory and timings. The book's text is not included; a browser that has the
 * same book (same content hash, kept in `document`) shows the sections too.
 */
export const EXPORT_FORMAT = 'memagent-run';
export const EXPORT_VERSION = 1;

const count = v.pipe(v.number(), v.integer(), v.minValue(0));
const num = v.pipe(v.number(), v.minValue(0));

// Why a skim read the chunk (absent on full reads and older exports).
const ReasonSchema = v.variant('by', [
  v.object({ by: v.picklist(['ranked', 'neighbour', 'start']) }),
  v.object({ by: v.picklist(['followed', 'looked-back']), name: v.pipe(v.string(), v.maxLength(200)) }),
]);

const SpanSchema = v.object({ start: count, end: count, tokens: count, reason: v.optional(ReasonSchema) });

// An InfMem read's searches, its planner's state and where it stopped (absent on MemAgent's reads and older exports).
const RetrievalSchema = v.object({ query: v.string(), topK: v.string(), fallback: v.optional(v.string()) });
const InfmemSchema = v.object({
  votes: count,
  history: v.array(RetrievalSchema),
  stopped: v.optional(v.object({ index: count, votes: count })),
  ties: v.optional(v.array(count)),
});
const PlanSchema = v.object({
  stop: v.boolean(),
  queries: v.array(v.string()),
  votes: count,
  retrieved: v.array(
    v.pipe(
      v.object({ chunk: count, start: count, end: count, excerpt: v.pipe(v.string(), v.maxLength(10_000)) }),
      v.check((p) => p.start <= p.end, 'a passage ends after it starts'),
    ),
  ),
});

const RunSchema = v.object({
  id: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  documentId: v.string(),
  documentName: v.string(),
  // The books of a run over a set, in reading order; an importing browser finds each by its hash.
  books: v.optional(
    v.array(
      v.object({
        documentId: v.string(),
        name: v.string(),
        title: v.string(),
        sha256: v.optional(v.pipe(v.string(), v.regex(SHA256_HEX))),
        start: count,
        body: count,
        end: count,
      }),
    ),
  ),
  question: v.string(),
  readId: v.optional(v.string()),
  engineId: v.string(),
  settings: v.object({
    requestedChunkTokens: count,
    chunkTokens: count,
    memoryTokens: count,
    contextTokens: count,
    temperature: num,
    topP: num,
    seed: v.optional(v.number()),
  }),
  templates: v.object({ update: v.string(), final: v.string() }),
  prompts: v.optional(
    v.object({
      set: v.picklist(['memagent', 'memagent-boxed', 'app', 'custom']),
      label: v.string(),
      answerStyle: v.picklist(['recurrent', 'recurrent-boxed', 'lenient']),
      file: v.optional(v.object({ path: v.string(), commit: v.string(), sha256: v.string(), source: v.optional(v.string()) })),
      note: v.optional(v.string()),
    }),
  ),
  chunks: v.array(SpanSchema),
  method: v.optional(v.object({ kind: v.literal('infmem'), earlyStop: v.pipe(v.number(), v.integer(), v.minValue(1)), thinking: v.boolean() })),
  infmem: v.optional(InfmemSchema),
  infmemModel: v.optional(
    v.object({
      family: v.picklist(['qwen3', 'qwen2.5']),
      files: v.object({ infmem: v.string(), fncall: v.string() }),
      endpoint: v.optional(v.literal('chat')),
      inert: v.optional(v.literal(true)),
    }),
  ),
  status: v.picklist(['running', 'paused', 'cancelled', 'done', 'failed']),
  nextChunk: count,
  memory: v.string(),
  answer: v.optional(v.string()),
  reply: v.optional(v.string()),
  error: v.optional(v.string()),
  createdAt: num,
  updatedAt: num,
  finishedAt: v.optional(num),
});

const RevisionSchema = v.object({
  index: count,
  memory: v.string(),
  memoryTokens: count,
  wordsAdded: count,
  wordsRemoved: count,
  start: count,
  end: count,
  chunkTokens: count,
  promptTokens: count,
  completionTokens: count,
  ms: num,
  finishReason: v.picklist(['stop', 'length', 'abort']),
  retries: count,
  committedAt: num,
  prefillTokensPerSecond: v.optional(num),
  decodeTokensPerSecond: v.optional(num),
  timeToFirstTokenSeconds: v.optional(num),
  writing: v.optional(v.object({ passes: num, drafted: num, accepted: num })),
  plan: v.optional(PlanSchema),
});

// A question asked of the run's final memory after the read (absent in older exports).
const FollowUpSchema = v.object({
  index: count,
  question: v.string(),
  answer: v.string(),
  reply: v.string(),
  memoryIndex: v.pipe(v.number(), v.integer(), v.minValue(-1)),
  promptTokens: count,
  completionTokens: count,
  finishReason: v.picklist(['stop', 'length', 'abort']),
  ms: num,
  askedAt: num,
});

// Where an answer's facts came from: revisions by number, sentences by their characters in the book (absent in older exports).
const text = v.pipe(v.string(), v.maxLength(100_000));
const SourcesSchema = v.object({
  answer: v.pipe(v.number(), v.integer(), v.minValue(RUN_ANSWER)),
  memoryIndex: v.pipe(v.number(), v.integer(), v.minValue(-1)),
  citations: v.array(
    v.object({
      revision: count,
      keptUntil: count,
      sentence: v.optional(
        v.pipe(
          v.object({ start: count, end: count, text }),
          v.check((s) => s.start <= s.end, 'a sentence ends after it starts'),
        ),
      ),
      returned: v.optional(v.boolean()),
      notes: v.array(text),
      place: text,
    }),
  ),
  unsourced: v.array(v.object({ text, reason: v.picklist(['memory', 'answer']) })),
  sections: v.boolean(),
  tracedAt: num,
});

const ExportSchema = v.pipe(
  v.object({
    format: v.literal(EXPORT_FORMAT),
    version: v.literal(EXPORT_VERSION),
    run: RunSchema,
    /** The book's SHA-256 (absent in older exports, whose run's documentId is that hash). */
    document: v.optional(v.object({ sha256: v.pipe(v.string(), v.regex(SHA256_HEX)) })),
    revisions: v.array(RevisionSchema),
    followUps: v.optional(v.array(FollowUpSchema)),
    sources: v.optional(v.array(SourcesSchema)),
  }),
  v.check(
    (e) => e.revisions.every((r, i) => r.index === i) && e.revisions.length <= e.run.chunks.length,
    'revisions must be numbered 0, 1, 2, … in order, at most one per chunk',
  ),
  v.check((e) => (e.followUps ?? []).every((f, i) => f.index === i), 'follow-up answers must be numbered 0, 1, 2, … in order'),
  v.check(
    (e) =>
      (e.sources ?? []).every(
        (s) =>
          (s.answer === RUN_ANSWER ? e.run.answer !== undefined : s.answer < (e.followUps?.length ?? 0)) &&
          s.citations.every((c) => c.revision <= c.keptUntil && c.keptUntil < e.revisions.length),
      ),
    'sources must belong to an answer of the run and cite its revisions',
  ),
);

export type RunExport = v.InferOutput<typeof ExportSchema>;

/** What an export is built from: a run, its revisions and their memories, and what else was written for it. */
export interface ExportParts {
  run: RunRecord;
  revisions: readonly RevisionRecord[];
  /** The memory each revision wrote, by its index. */
  memories: readonly string[];
  followUps?: readonly FollowUpRecord[];
  /** The book's content hash, by which an import finds the same book. */
  documentSha256?: string;
  sources?: readonly SourcesRecord[];
}

export function buildExport({ run, revisions, memories, followUps = [], documentSha256, sources = [] }: ExportParts): RunExport {
  return {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    run,
    ...(documentSha256 ? { document: { sha256: documentSha256 } } : {}),
    revisions: revisions.map(({ runId: _runId, ...r }, i) => ({ ...r, memory: memories[i] ?? '' })),
    ...(followUps.length ? { followUps: followUps.map(({ runId: _runId, ...f }) => f) } : {}),
    ...(sources.length ? { sources: sources.map(({ runId: _runId, ...s }) => s) } : {}),
  };
}

export class ImportError extends Error {
  override name = 'ImportError';
}

/** The largest export read: a run of thousands of revisions takes tens of megabytes, and a string of gigabytes would sink the tab. */
export const MAX_EXPORT_BYTES = 256 * 1024 * 1024;

/** Refuses, before it is read, a file too large to be a run export. */
export function checkExportSize(bytes: number): void {
  if (bytes > MAX_EXPORT_BYTES) {
    throw new ImportError(
      `This file is ${Math.round(bytes / 1024 / 1024)} MB, larger than any run export (at most ${MAX_EXPORT_BYTES / 1024 / 1024} MB). ` +
        'Choose a run exported from memagent-web with "Export JSON". Nothing was imported.',
    );
  }
}

/** Parses and validates an export before anything is written; the records to store. */
export function parseExport(json: string): {
  run: RunRecord;
  revisions: RevisionRecord[];
  memories: MemoryRecord[];
  followUps: FollowUpRecord[];
  /** The answers' sources as the exporting browser traced them (an importing one traces them again where it has the book). */
  sources: SourcesRecord[];
  /** The book's SHA-256, where the export says it. */
  documentSha256?: string;
} {
  checkExportSize(json.length);
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch {
    throw new ImportError('This file is not JSON. Choose a run exported from memagent-web with "Export JSON".');
  }
  const result = v.safeParse(ExportSchema, data);
  if (!result.success) {
    const issue = result.issues[0];
    const where = issue?.path?.map((p) => String(p.key)).join('.') ?? '';
    throw new ImportError(
      `This file is not a valid memagent-web run export${where ? ` (at ${where})` : ''}: ${issue?.message ?? 'unknown problem'}. Nothing was imported.`,
    );
  }
  const { run, revisions, followUps = [], sources = [], document } = result.output;
  if (followUps.length && run.status !== 'done') {
    throw new ImportError('This file is not a valid memagent-web run export (at followUps): only a finished run has follow-up answers. Nothing was imported.');
  }
  const imported: RunRecord = {
    ...run,
    // An imported run is a record to read, not a run to continue on its own.
    status: run.status === 'running' ? 'paused' : run.status,
    nextChunk: revisions.length,
    memory: revisions.at(-1)?.memory ?? run.memory,
  };
  return {
    run: imported,
    revisions: revisions.map(({ memory: _memory, ...r }) => ({ ...r, runId: run.id })),
    memories: revisions.map((r) => ({ runId: run.id, index: r.index, memory: r.memory })),
    followUps: followUps.map((f) => ({ ...f, runId: run.id })),
    sources: sources.map((s) => ({ ...s, runId: run.id })),
    ...(document ? { documentSha256: document.sha256 } : {}),
  };
}

function fence(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  return '`'.repeat(longest + 1);
}

/** An answer's sources in Markdown as the page words them: each cited sentence quoted, with its place and the revisions that wrote it down and kept it. */
function sourcesMarkdown(sources: RunExport['sources'], answer: number, total: number): string[] {
  const found = sources?.find((s) => s.answer === answer);
  // An answer that claims nothing from the book (a reply that answers nothing) has no sources to quote.
  if (!found || (!found.citations.length && !found.unsourced.length)) return [];
  const lines = ['**Sources:**', ''];
  for (const c of found.citations) {
    const at = [c.place, `section ${c.revision + 1} of ${total}`].filter(Boolean).join(' · ');
    const kept =
      c.revision === c.keptUntil
        ? `written down at revision ${c.revision + 1}`
        : `written down at revision ${c.revision + 1}, kept to revision ${c.keptUntil + 1}`;
    const back = c.returned ? ' · it left the memory later and came back without a section that holds it' : '';
    lines.push(
      c.sentence ? `> ${c.sentence.text}` : `> (the book is not in the browser that traced it: ${c.notes.join(' ')})`,
      '',
      `— ${at} · ${kept}${back}`,
      '',
    );
  }
  for (const u of found.unsourced) {
    lines.push(
      `> ${u.text}`,
      '',
      u.reason === 'memory'
        ? '— no source found in the book: the memory holds it, no section read does'
        : '— no source found in the book: the memory does not hold it',
      '',
    );
  }
  return lines;
}

/** An InfMem revision's plan in Markdown: its searches or its vote, and each retrieved passage's chunk and first words. */
function planMarkdown(plan: RunExport['revisions'][number]['plan']): string[] {
  if (!plan) return [];
  const what = plan.queries.length
    ? `searched ${plan.queries.map((q) => JSON.stringify(q)).join(', ')}`
    : `${plan.stop ? 'voted to stop' : 'called no search'} (${plan.votes} in a row)`;
  const passages = plan.retrieved.map((p, i) => `${i + 1}. chunk ${p.chunk + 1}, characters ${p.start}–${p.end}: ${p.excerpt.replace(/\s+/g, ' ').trim()}…`);
  return [`Plan: ${what}.`, '', ...(passages.length ? ['Retrieved passages:', '', ...passages, ''] : [])];
}

/** What the Markdown export says of a memory that is still the empty start. */
export const EMPTY_MEMORY_NOTE = '*Empty: the read starts with no memory, and none has been written yet.*';

/** Question, answer and its sources, and each revision's memory, for reading or pasting. */
export function toMarkdown(e: RunExport): string {
  const total = e.run.chunks.length;
  const lines = [
    `# ${e.run.question}`,
    '',
    `Document: ${e.run.documentName} · engine: ${e.run.engineId} · ${total} chunks of up to ${e.run.settings.chunkTokens} tokens · memory ${e.run.settings.memoryTokens} tokens` +
      (e.run.prompts
        ? ` · prompts: ${e.run.prompts.label}${e.run.prompts.file ? ` (${e.run.prompts.file.path} at ${e.run.prompts.file.commit.slice(0, 7)}, SHA-256 ${e.run.prompts.file.sha256})` : ''}`
        : ''),
    '',
    `**Answer:** ${e.run.answer ?? '(not answered yet)'}`,
    '',
    ...sourcesMarkdown(e.sources, RUN_ANSWER, total),
  ];
  const method = e.run.method;
  if (method) {
    const stopped = e.run.infmem?.stopped;
    lines.splice(
      3,
      0,
      `Method: InfMem, stop after ${method.earlyStop} votes in a row. ` +
        (stopped
          ? `Stopped before chunk ${stopped.index + 1} of ${total} after ${stopped.votes} votes; chunks ${stopped.index + 1} to ${total} were never read.`
          : e.run.status === 'done'
            ? 'Read every chunk.'
            : ''),
      '',
    );
  }
  const books = e.run.books;
  // A set's books in reading order, and with each revision the book its chunk is in.
  if (books) lines.splice(3, 0, 'Books, read in this order as one stream:', '', ...books.map((b, i) => `${i + 1}. ${bookName(b)}`), '');
  for (const r of e.revisions) {
    const f = fence(r.memory);
    const book = books ? ` · ${bookName(books[bookAt(books, r.start)]!)}` : '';
    lines.push(`## Revision ${r.index + 1} (chunk ${r.index + 1} of ${total}${book})`, '', ...planMarkdown(r.plan));
    // The empty start's words are what the prompt sends, not memory: said as what they are.
    lines.push(...(isEmptyStart(r.memory) ? [EMPTY_MEMORY_NOTE, ''] : [f, r.memory, f, '']));
  }
  if (e.followUps?.length) {
    lines.push('## Follow-up answers', '', `Answered from the final memory, which was kept for the question "${e.run.question}".`, '');
    for (const f of e.followUps)
      lines.push(`### ${f.question.replace(/\s+/g, ' ')}`, '', `**Answer:** ${f.answer}`, '', ...sourcesMarkdown(e.sources, f.index, total));
  }
  return lines.join('\n');
}
