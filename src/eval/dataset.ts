import { pyStrip } from '../core/pytext';

/**
 * RULER-HotpotQA files as published (`eval_50.json` … `eval_6400.json`): a
 * JSON list of items, or one item per line (JSON Lines). Each item has
 * `context` (the documents), `input` (the question), `answers` (a list; the
 * first is scored) and `num_docs`. The files run to hundreds of megabytes, so
 * they are read in pieces, one item at a time.
 */

export interface DatasetItem {
  /** Position in its file, from 0. */
  index: number;
  /** `context`, stripped as the paper strips it. */
  context: string;
  /** `input`, stripped. */
  question: string;
  answers: string[];
  /** `num_docs`; from a name like eval_200.json when the item lacks it; null when neither says. */
  numDocs: number | null;
}

/** A file that is not a RULER-HotpotQA dataset, said so that a person can fix it. */
export class DatasetError extends Error {
  override name = 'DatasetError';
}

/** The document count in a name like `eval_200.json`, if it has one. */
export function numDocsFromName(name: string): number | null {
  const m = /(?:^|[/\\_-])(?:eval_)?(\d+)\.jsonl?$/i.exec(name);
  return m ? Number(m[1]) : null;
}

const STRING_STOP = /["\\]/g;

/**
 * Splits JSON text fed in pieces into the texts of its items: the objects of
 * a top-level list, or top-level objects one after another (JSON Lines).
 * Strings are skipped over whole, so braces inside them do not count.
 */
export class ItemSplitter {
  private mode: 'start' | 'list' | 'lines' | 'ended' = 'start';
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Parts of the item being read, across pieces. */
  private parts: string[] = [];
  private line = 1;
  private itemLine = 1;

  constructor(private readonly name: string) {}

  /** The items completed by this piece of the text, each with the line it starts on. */
  push(piece: string): { text: string; line: number }[] {
    const out: { text: string; line: number }[] = [];
    let from = -1; // start of the current item within this piece
    if (this.depth > 0) from = 0;
    for (let i = 0; i < piece.length; i++) {
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false;
          continue;
        }
        // Jump to the next quote or backslash: contexts are megabytes of string (with no raw line breaks in valid JSON).
        STRING_STOP.lastIndex = i;
        const stop = STRING_STOP.exec(piece);
        if (!stop) break;
        i = stop.index;
        if (piece.charCodeAt(i) === 92) this.escaped = true;
        else this.inString = false;
        continue;
      }
      const c = piece.charCodeAt(i);
      if (c === 10) this.line++;
      if (this.depth > 0) {
        if (c === 34) this.inString = true;
        else if (c === 123 || c === 91) this.depth++;
        else if (c === 125 || c === 93) {
          if (--this.depth === 0) {
            this.parts.push(piece.slice(from, i + 1));
            out.push({ text: this.parts.join(''), line: this.itemLine });
            this.parts = [];
            from = -1;
          }
        }
        continue;
      }
      // Between items.
      if (c === 32 || c === 9 || c === 10 || c === 13 || c === 0xfeff) continue;
      if (this.mode === 'start' && c === 91) {
        this.mode = 'list';
        continue;
      }
      if (c === 123 && this.mode !== 'ended') {
        if (this.mode === 'start') this.mode = 'lines';
        this.depth = 1;
        from = i;
        this.itemLine = this.line;
        continue;
      }
      if (this.mode === 'list' && c === 44) continue; // comma
      if (this.mode === 'list' && c === 93) {
        this.mode = 'ended';
        continue;
      }
      throw new DatasetError(
        `${this.name} is not a RULER-HotpotQA file: line ${this.line} has "${piece[i]}" where an item ({ … }) should be. ` +
          'The file should be a JSON list of items or one JSON item per line.',
      );
    }
    if (this.depth > 0 && from >= 0) this.parts.push(piece.slice(from));
    return out;
  }

  /** Checks that the text ended after a whole item. */
  end(): void {
    if (this.depth > 0 || this.inString) throw new DatasetError(`${this.name} ends in the middle of an item (line ${this.itemLine}): the file is cut short.`);
    if (this.mode === 'list') throw new DatasetError(`${this.name} ends before its list is closed: the file is cut short.`);
  }
}

/** One parsed item, checked field by field. */
export function datasetItem(raw: unknown, index: number, name: string, line: number): DatasetItem {
  const where = `${name}, item ${index + 1} (line ${line})`;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new DatasetError(`${where} is not an object.`);
  const o = raw as Record<string, unknown>;
  const missing = ['context', 'input', 'answers'].filter((k) => !(k in o));
  if (missing.length) throw new DatasetError(`${where} has no ${missing.join(', ')}: RULER-HotpotQA items have context, input, answers and num_docs.`);
  if (typeof o.context !== 'string') throw new DatasetError(`${where}: "context" must be text.`);
  if (typeof o.input !== 'string') throw new DatasetError(`${where}: "input" (the question) must be text.`);
  if (!Array.isArray(o.answers) || o.answers.length === 0 || !o.answers.every((a) => typeof a === 'string')) {
    throw new DatasetError(`${where}: "answers" must be a list of at least one text; the first is scored.`);
  }
  let numDocs = numDocsFromName(name);
  if (o.num_docs !== undefined && o.num_docs !== null) {
    if (typeof o.num_docs !== 'number' || !Number.isInteger(o.num_docs) || o.num_docs < 0)
      throw new DatasetError(`${where}: "num_docs" must be a whole number.`);
    numDocs = o.num_docs;
  }
  return { index, context: pyStrip(o.context), question: pyStrip(o.input), answers: o.answers as string[], numDocs };
}

/** Reads a dataset from its text in pieces (a file stream decoded as UTF-8), one item at a time. */
export async function* readDataset(pieces: AsyncIterable<string> | Iterable<string>, name: string): AsyncGenerator<DatasetItem> {
  const splitter = new ItemSplitter(name);
  let index = 0;
  for await (const piece of pieces) {
    for (const { text, line } of splitter.push(piece)) {
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch (e) {
        throw new DatasetError(`${name}, item ${index + 1} (line ${line}) is not valid JSON: ${(e as Error).message}`);
      }
      yield datasetItem(raw, index++, name, line);
    }
  }
  splitter.end();
  if (index === 0) throw new DatasetError(`${name} holds no items.`);
}
