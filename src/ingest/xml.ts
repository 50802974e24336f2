import { Parser } from 'htmlparser2';
import { IngestError } from './errors';

/**
 * The deepest nesting of elements read. htmlparser2 keeps open elements in an
 * array that it grows at the front, so each level costs a copy of all the
 * levels above it: a file nested a million deep would stall the reader for
 * hours. Books nest a few dozen levels.
 */
export const MAX_NESTING = 4096;

export function nestingError(): IngestError {
  return new IngestError(
    `The file's markup nests elements more than ${MAX_NESTING.toLocaleString('en')} levels deep, which no book does: ` +
      'it is damaged or made to stall readers, and was not read.',
  );
}

export interface XmlHandlers {
  open?(name: string, attrs: Record<string, string>): void;
  text?(text: string): void;
  close?(name: string): void;
}

/** Local name of a tag or attribute, lower-cased: "opf:item" → "item". */
function local(name: string): string {
  const i = name.lastIndexOf(':');
  return (i < 0 ? name : name.slice(i + 1)).toLowerCase();
}

/**
 * Walks an XML document (OPF, NCX, container.xml, WordprocessingML) with
 * namespace prefixes removed from tag and attribute names. Tokenising only:
 * no DTDs or external entities are ever loaded.
 */
export function walkXml(xml: string, handlers: XmlHandlers): void {
  let depth = 0;
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (++depth > MAX_NESTING) throw nestingError();
        if (!handlers.open) return;
        const attrs: Record<string, string> = {};
        for (const [k, v] of Object.entries(attribs)) {
          attrs[local(k)] = v;
          attrs[k.toLowerCase()] = v;
        }
        handlers.open(local(name), attrs);
      },
      ontext(text) {
        handlers.text?.(text);
      },
      onclosetag(name) {
        depth--;
        handlers.close?.(local(name));
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.write(xml);
  parser.end();
}
