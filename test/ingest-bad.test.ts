import { describe, expect, it } from 'vitest';
import { IngestError, ingestBytes, MAX_FILE_BYTES } from '../src/ingest/ingest';
import { lieAboutSizes, makeCorruptPdf, makeDocx, makeEncryptedPdf, makeEpub, makeScannedPdf, owned } from './fixtures/documents';
import { pseudoRandomBytes } from './helpers';

async function refusal(name: string, bytes: Uint8Array<ArrayBuffer>, options = {}): Promise<string> {
  try {
    await ingestBytes(name, bytes, options);
  } catch (e) {
    expect(e).toBeInstanceOf(IngestError);
    return (e as Error).message;
  }
  throw new Error(`${name} was accepted`);
}

const utf8 = (s: string) => owned(new TextEncoder().encode(s));

describe('bad input gets a specific refusal', () => {
  it('zero bytes', async () => {
    expect(await refusal('empty.txt', owned(new Uint8Array(0)))).toMatch(/is empty \(0 bytes\)/);
    expect(await refusal('empty.pdf', owned(new Uint8Array(0)))).toMatch(/is empty/);
  });

  it('blank space only', async () => {
    expect(await refusal('blank.txt', utf8(' \n\n\t '))).toMatch(/only blank space/);
  });

  it('binary data, named as text', async () => {
    expect(await refusal('noise.txt', pseudoRandomBytes(50_000, 7))).toMatch(/binary data, not text/);
    expect(await refusal('photo.txt', owned(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0])))).toMatch(/is a PNG image, not text/);
    // Bytes without NULs that no charset makes sense of.
    const controls = owned(pseudoRandomBytes(20_000, 3).map((b) => (b % 31) + 1));
    expect(await refusal('controls.txt', controls)).toMatch(/binary data/);
  });

  it('a corrupt PDF', async () => {
    expect(await refusal('broken.pdf', makeCorruptPdf())).toMatch(/is damaged or not a PDF/);
    expect(await refusal('notreally.pdf', utf8('just some text, not a PDF at all'))).toMatch(/damaged or not a PDF/);
  });

  it('an encrypted PDF', async () => {
    expect(await refusal('secret.pdf', makeEncryptedPdf())).toMatch(/encrypted with a password/);
  });

  it('a scanned PDF with no text layer', async () => {
    expect(await refusal('scan.pdf', await makeScannedPdf(3))).toMatch(/has no text layer: its 3 pages are images.*OCR/);
  });

  it('an EPUB that is not a zip', async () => {
    expect(await refusal('book.epub', utf8('<html>this is not a zip</html>'))).toMatch(/not a valid EPUB.*not one/);
    expect(await refusal('book.epub', pseudoRandomBytes(3000, 1))).toMatch(/not a valid EPUB/);
  });

  it('a zip that is no EPUB: no package document', async () => {
    const epub = makeEpub();
    // Same archive, with the container and the OPF renamed away.
    const text = new TextDecoder('latin1').decode(epub);
    const renamed = owned(
      new Uint8Array([...text.replaceAll('content.opf', 'content.xyz').replaceAll('container.xml', 'containe_.xml')].map((c) => c.charCodeAt(0))),
    );
    expect(await refusal('book.epub', renamed)).toMatch(/no package document/);
  });

  it('a DRM-protected EPUB', async () => {
    expect(await refusal('locked.epub', makeEpub({ drm: true }))).toMatch(/protected by DRM/);
  });

  it('an archive that expands far beyond its size (honest and lying headers)', async () => {
    const bomb = makeEpub({ bomb: 20 * 1024 * 1024 });
    expect(bomb.length).toBeLessThan(100_000);
    const limit = { maxUnzippedBytes: 8 * 1024 * 1024 };
    expect(await refusal('bomb.epub', bomb, limit)).toMatch(/expands to more than 8 MB.*zip bomb/);
    expect(await refusal('liar.epub', lieAboutSizes(bomb, 100), limit)).toMatch(/zip bomb/);
    // The default cap: 50× the archive, at least 64 MiB.
    expect(await refusal('big.epub', makeEpub({ bomb: 70 * 1024 * 1024 }))).toMatch(/more than 64 MB/);
  });

  it('a damaged DOCX, and a password-protected one (an OLE file)', async () => {
    const docx = makeDocx();
    expect(await refusal('cut.docx', owned(docx.slice(0, docx.length - 30)))).toMatch(/not a valid Word document/);
    const ole = owned(new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, ...new Uint8Array(600)]));
    expect(await refusal('secret.docx', ole)).toMatch(/encrypted with a password/);
    expect(await refusal('old.doc', ole)).toMatch(/old Microsoft Office file/);
  });

  it('a zip that is neither EPUB nor DOCX', async () => {
    const { zipSync } = await import('fflate');
    expect(await refusal('photos.zip', owned(zipSync({ 'a.jpg': new Uint8Array(10) })))).toMatch(/ZIP archive, not a book/);
  });

  it('HTML that is all script', async () => {
    expect(await refusal('app.html', utf8('<html><body><script>alert(1)</script></body></html>'))).toMatch(/no readable text.*scripts/);
  });

  it('a file larger than a tab can hold', async () => {
    // A sparse stand-in: only the length is read before the refusal.
    const huge = { length: MAX_FILE_BYTES + 1 } as Uint8Array<ArrayBuffer>;
    expect(await refusal('huge.txt', huge)).toMatch(/largest file this app reads is 256 MB/);
  });
});
