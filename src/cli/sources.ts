/**
 * The sources of `memagent read`'s answer: traced through the read's memories
 * back to the book's sentences (core/citations), printed after the answer and
 * kept on the journal's answer line.
 */
import { sourcePlace } from '../core/anchors';
import type { ChunkSpan } from '../core/chunker';
import type { Citation, Unsourced } from '../core/citations/citation';
import { Tracer } from '../core/citations/trace';
import type { ReadText } from './read-set';
import { whole } from './numbers';

/**
 * An answer's sources as the terminal, --json and the journal give them:
 * revisions numbered from 1, as printed and as the journal's revision lines
 * number them; sentences by their characters in the text read.
 */
export interface ReadSources {
  citations: (Citation & { place: string })[];
  unsourced: Unsourced[];
}

/** The same sources with every revision number moved by `by`: from the tracer's count from 0, or a journal's old count. */
export function renumberSources(sources: ReadSources, by: number): ReadSources {
  return { ...sources, citations: sources.citations.map((c) => ({ ...c, revision: c.revision + by, keptUntil: c.keptUntil + by })) };
}

/** A finished read, as tracing its answer needs it. */
export interface FinishedRead {
  question: string;
  chunks: readonly ChunkSpan[];
  /** The memory of each revision, by index: the answer was written from the last. */
  memories: readonly string[];
  answer: string;
}

/** Traces a read's answer, written from the last of its memories, through them to the sentences of `doc`. */
export async function traceRead(doc: ReadText, { question, chunks, memories, answer }: FinishedRead): Promise<ReadSources> {
  const tracer = new Tracer({
    question,
    memories,
    section: (r) => chunks[r] && { text: doc.text.slice(chunks[r].start, chunks[r].end), start: chunks[r].start },
  });
  const { citations, unsourced } = await tracer.citeAnswer(answer);
  const anchors = doc.anchors ?? [];
  const placed = citations.map((c) => ({ ...c, place: sourcePlace(anchors, c.sentence?.start, chunks[c.revision] ?? { start: 0, end: 0 }) }));
  return renumberSources({ citations: placed, unsourced }, 1);
}

/** The sources in words, after the answer: each cited sentence quoted, with its place and the revision that wrote it down. */
export function formatSources(sources: ReadSources, total: number): string {
  // An answer that claims nothing from the book (a reply that answers nothing) has no sources to print.
  if (!sources.citations.length && !sources.unsourced.length) return '';
  const lines = ['', 'Sources:'];
  sources.citations.forEach((c, i) => {
    const where = [c.place, `section ${whole(c.revision)} of ${whole(total)}`].filter(Boolean).join(' · ');
    const kept = c.revision === c.keptUntil ? '' : `, kept to revision ${whole(c.keptUntil)}`;
    lines.push(`  ${i + 1}. "${c.sentence?.text ?? c.notes.join(' ')}"`, `     ${where} · written down at revision ${whole(c.revision)}${kept}`);
  });
  for (const u of sources.unsourced) {
    lines.push(
      `  No source found in the book: "${u.text}" (${u.reason === 'memory' ? 'the memory holds it, no section read does' : 'the memory does not hold it'})`,
    );
  }
  return `${lines.join('\n')}\n`;
}
