import { makeEpub, makePdf, prose } from '../test/fixtures/documents';

/** Three books for reading as one set: a two-hop question whose facts are in a text file and a PDF, with an EPUB between. */
export const QUESTION = 'Where was the warden of Gull Rock born?';
// Two hops: who is warden of Gull Rock (the first book), and where that person was born (the third).
export const FACT_1 = 'The warden of Gull Rock is Orrin Vale.';
export const FACT_2 = 'Orrin Vale was born in Port Meridian, far from Gull Rock.';

export interface Payload {
  name: string;
  mimeType: string;
  buffer: Buffer;
}

/** Lines of a PDF page, as makePdf draws them. */
const wrap = (s: string) => s.match(/.{1,80}(\s|$)/g)!.map((l) => l.trim());

/** harbour.txt (the first fact), weather.epub ("The Weather Book", no fact) and families.pdf (the second fact). */
export async function threeBooks(): Promise<{ harbour: Payload; weather: Payload; families: Payload }> {
  return {
    harbour: { name: 'harbour.txt', mimeType: 'text/plain', buffer: Buffer.from(`${prose(1, 60)}\n\n${FACT_1}\n\n${prose(2, 60)}`) },
    weather: {
      name: 'weather.epub',
      mimeType: 'application/epub+zip',
      buffer: Buffer.from(makeEpub({ title: 'The Weather Book', chapters: [{ title: 'Chapter 1: Rain', paragraphs: [prose(3, 40), prose(4, 40)] }] })),
    },
    families: {
      name: 'families.pdf',
      mimeType: 'application/pdf',
      buffer: Buffer.from(await makePdf([wrap(prose(5, 30)), [...wrap(prose(6, 8)), ...wrap(FACT_2), ...wrap(prose(7, 8))], wrap(prose(8, 30))])),
    },
  };
}
