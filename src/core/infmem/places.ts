/**
 * Where InfMem's chunks and units lie in the text read, by characters: the
 * document is cut in tokens of the stripped text, and each span's decoded
 * text follows the last. The app stores each step's chunk and passages by
 * these places; the command line traces an answer's sources through them.
 */
import type { SectionText } from '../citations/citation';
import { pyStrip } from '../pytext';
import type { InfmemDocument, TokenSpan } from './retrieval';

/** A span of the text read, by characters. */
export interface Placed {
  start: number;
  end: number;
}

export interface DocumentPlaces {
  chunks: Placed[];
  units: Placed[];
}

/**
 * Where each chunk and passage lies in `text`, by characters: the method reads
 * the text stripped, and its pieces, decoded one by one, follow each other.
 */
export function placeDocument(text: string, document: InfmemDocument): DocumentPlaces {
  const stripped = pyStrip(text);
  const lead = Math.max(0, text.indexOf(stripped));
  const lay = (spans: readonly TokenSpan[], from: number) => {
    let at = from;
    return spans.map((s) => {
      const start = Math.min(at, text.length);
      at += s.text.length;
      return { start, end: Math.min(at, text.length) };
    });
  };
  const chunks = lay(document.chunks, lead);
  const units = document.chunks.flatMap((_, c) =>
    lay(
      document.units.filter((u) => u.chunk === c),
      chunks[c]!.start,
    ),
  );
  return { chunks, units };
}

/**
 * What one InfMem step read, as tracing takes it: its chunk, and the units
 * retrieved with it as passages, whose sentences are sources too.
 */
export function stepSection(text: string, places: DocumentPlaces, step: { index: number; units: readonly number[] }): SectionText | undefined {
  const chunk = places.chunks[step.index];
  if (!chunk) return undefined;
  const passages = step.units.flatMap((u) => {
    const p = places.units[u];
    return p ? [{ text: text.slice(p.start, p.end), start: p.start }] : [];
  });
  return { text: text.slice(chunk.start, chunk.end), start: chunk.start, ...(passages.length && { passages }) };
}
