import { Parser } from 'htmlparser2';

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
  const parser = new Parser(
    {
      onopentag(name, attribs) {
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
        handlers.close?.(local(name));
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.write(xml);
  parser.end();
}
