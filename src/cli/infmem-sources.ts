/**
 * The sources of an InfMem read's answer on the command line, traced as the
 * app traces an InfMem run's: through each step's memory to the sentences of
 * the chunk it read and of the passages retrieved with it (core/citations,
 * `stepSection`), then placed and numbered as MemAgent's read prints them.
 */
import { sourcePlace } from '../core/anchors';
import { Tracer } from '../core/citations/trace';
import { type DocumentPlaces, placeDocument, stepSection } from '../core/infmem/places';
import type { InfmemDocument } from '../core/infmem/retrieval';
import type { ReadText } from './read-set';
import { type ReadSources, renumberSources } from './sources';

/** One chunk an InfMem read wrote: which chunk, the units retrieved for it, and the memory written. */
export interface InfmemWritten {
  index: number;
  units: readonly number[];
  memory: string;
}

export class InfmemSources {
  private readonly places: DocumentPlaces;

  constructor(
    private readonly doc: ReadText,
    document: InfmemDocument,
  ) {
    this.places = placeDocument(doc.text, document);
  }

  /** Where chunk `index` begins, in the words of the book's places (a chapter, a book of a set), where it names them. */
  placeOf(index: number): string | undefined {
    const chunk = this.places.chunks[index];
    return chunk && this.doc.placeAt ? this.doc.placeAt(chunk.start) || undefined : undefined;
  }

  /** Traces `answer`, written from the last memory of `written` (the first memory where none), to the book's sentences. */
  async trace(question: string, written: readonly InfmemWritten[], answer: string): Promise<ReadSources> {
    const { doc, places } = this;
    const tracer = new Tracer({ question, memories: written.map((w) => w.memory), section: (r) => written[r] && stepSection(doc.text, places, written[r]) });
    const { citations, unsourced } = await tracer.citeAnswer(answer);
    const anchors = doc.anchors ?? [];
    const chunkOf = (r: number) => places.chunks[written[r]?.index ?? -1] ?? { start: 0, end: 0 };
    const placed = citations.map((c) => ({ ...c, place: sourcePlace(anchors, c.sentence?.start, chunkOf(c.revision)) }));
    return renumberSources({ citations: placed, unsourced }, 1);
  }
}
