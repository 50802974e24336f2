import { Inflate } from 'fflate';
import { IngestError } from './errors';

/**
 * A small ZIP reader for EPUB and DOCX with a hard cap on what it inflates:
 * sizes in a ZIP's headers are the writer's claim, so a crafted archive (a "zip
 * bomb") could expand a few kilobytes into gigabytes. Entries are inflated in
 * small steps and counted as they grow.
 */
export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
  offset: number;
  encrypted: boolean;
}

export interface ZipLimits {
  /** Most bytes that all entries read from this archive may expand to together. */
  maxBytes: number;
}

const STEP = 16 * 1024; // compressed bytes per inflate step: bounds the overshoot past the cap

export class ZipArchive {
  private readonly entries = new Map<string, ZipEntry>();
  private inflated = 0;

  private constructor(
    private readonly bytes: Uint8Array,
    private readonly what: string,
    private readonly limits: ZipLimits,
  ) {}

  /** Reads the central directory; null when `bytes` are not a ZIP archive. */
  static open(bytes: Uint8Array, what: string, limits: ZipLimits): ZipArchive | null {
    const zip = new ZipArchive(bytes, what, limits);
    return zip.readDirectory() ? zip : null;
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  entry(name: string): ZipEntry | undefined {
    return this.entries.get(name);
  }

  /** An entry's bytes, or undefined if there is none by that name. */
  read(name: string): Uint8Array | undefined {
    const e = this.entries.get(name);
    if (!e) return undefined;
    if (e.encrypted) throw new IngestError(`${this.what} is password-protected. Remove the password and try again.`);
    const b = this.bytes;
    const at = e.offset;
    if (at + 30 > b.length || u32(b, at) !== 0x04034b50) throw this.corrupt();
    const start = at + 30 + u16(b, at + 26) + u16(b, at + 28);
    const end = start + e.compressedSize;
    if (end > b.length) throw this.corrupt();
    const data = b.subarray(start, end);
    // An honest header already tells: refuse before inflating anything.
    if (this.inflated + e.size > this.limits.maxBytes) throw this.bomb();
    if (e.method === 0) return this.count(data.slice());
    if (e.method !== 8) throw new IngestError(`${this.what} uses a compression method (${e.method}) that cannot be read.`);
    const parts: Uint8Array[] = [];
    let size = 0;
    const inflate = new Inflate((chunk) => {
      size += chunk.length;
      this.inflated += chunk.length;
      parts.push(chunk);
    });
    try {
      for (let i = 0; i < data.length; i += STEP) {
        inflate.push(data.subarray(i, Math.min(data.length, i + STEP)), i + STEP >= data.length);
        if (this.inflated > this.limits.maxBytes) throw this.bomb();
      }
      if (data.length === 0) inflate.push(new Uint8Array(0), true);
    } catch (err) {
      if (err instanceof IngestError) throw err;
      throw this.corrupt();
    }
    const out = new Uint8Array(size);
    let o = 0;
    for (const p of parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }

  /** An entry as text (UTF-8, BOM dropped). */
  readText(name: string): string | undefined {
    const b = this.read(name);
    return b && new TextDecoder().decode(b);
  }

  private count(data: Uint8Array): Uint8Array {
    this.inflated += data.length;
    if (this.inflated > this.limits.maxBytes) throw this.bomb();
    return data;
  }

  private bomb(): IngestError {
    const mb = Math.round(this.limits.maxBytes / 1024 / 1024);
    return new IngestError(
      `${this.what} expands to more than ${mb} MB, far beyond its own size of ${formatSize(this.bytes.length)}: ` +
        'it looks like a "zip bomb" and was not opened.',
    );
  }

  private corrupt(): IngestError {
    return new IngestError(`${this.what} is damaged: its ZIP archive cannot be read. Download the file again.`);
  }

  private readDirectory(): boolean {
    const b = this.bytes;
    if (b.length < 22) return false;
    let eocd = -1;
    for (let i = b.length - 22; i >= Math.max(0, b.length - 22 - 65535); i--) {
      if (u32(b, i) === 0x06054b50) {
        eocd = i;
        break;
      }
    }
    if (eocd < 0) return false;
    const count = u16(b, eocd + 10);
    let p = u32(b, eocd + 16);
    if (p === 0xffffffff || count === 0xffff) {
      throw new IngestError(`${this.what} is a ZIP64 archive, larger than a book needs to be, and was not opened.`);
    }
    const names = new TextDecoder();
    for (let i = 0; i < count; i++) {
      if (p + 46 > b.length || u32(b, p) !== 0x02014b50) throw this.corrupt();
      const nameLength = u16(b, p + 28);
      const entry: ZipEntry = {
        name: names.decode(b.subarray(p + 46, p + 46 + nameLength)),
        method: u16(b, p + 10),
        compressedSize: u32(b, p + 20),
        size: u32(b, p + 24),
        offset: u32(b, p + 42),
        encrypted: (u16(b, p + 8) & 1) === 1,
      };
      this.entries.set(entry.name, entry);
      p += 46 + nameLength + u16(b, p + 30) + u16(b, p + 32);
    }
    return true;
  }
}

function u16(b: Uint8Array, i: number): number {
  return (b[i] ?? 0) | ((b[i + 1] ?? 0) << 8);
}

function u32(b: Uint8Array, i: number): number {
  return (u16(b, i) | (u16(b, i + 2) << 16)) >>> 0;
}

function formatSize(n: number): string {
  return n < 1024 * 1024 ? `${Math.max(1, Math.round(n / 1024))} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;
}
