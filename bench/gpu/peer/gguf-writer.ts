/**
 * A GGUF file writer (format version 3, little-endian), written from ggml's
 * description of the format: a header, typed key-value metadata, a table of
 * tensor infos whose offsets count from the start of the data section, then
 * each tensor's bytes at the alignment. Tensors are produced piece by piece
 * into the open file, so a 7B model (about 4 GB at 4 bits) never has to be in
 * memory at once.
 */
import { closeSync, openSync, renameSync, writeSync } from 'node:fs';

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian uint32
export const GGUF_VERSION = 3;
export const GGUF_ALIGNMENT = 32;

/** GGUF's value types. */
export const GgufType = {
  UINT8: 0,
  INT8: 1,
  UINT16: 2,
  INT16: 3,
  UINT32: 4,
  INT32: 5,
  FLOAT32: 6,
  BOOL: 7,
  STRING: 8,
  ARRAY: 9,
  UINT64: 10,
  INT64: 11,
  FLOAT64: 12,
} as const;
type ScalarType = Exclude<(typeof GgufType)[keyof typeof GgufType], 9>;

/** ggml's tensor types that this writer knows the sizes of. */
export const GgmlType = { F32: 0, F16: 1, Q4_0: 2 } as const;
export type GgmlTypeId = (typeof GgmlType)[keyof typeof GgmlType];

/** Elements per block and bytes per block of each tensor type. */
const BLOCK: Record<GgmlTypeId, { elements: number; bytes: number }> = {
  [GgmlType.F32]: { elements: 1, bytes: 4 },
  [GgmlType.F16]: { elements: 1, bytes: 2 },
  // Q4_0: one f16 scale, then 32 four-bit codes packed two to a byte.
  [GgmlType.Q4_0]: { elements: 32, bytes: 18 },
};

export type GgufValue =
  | { type: ScalarType; value: number | bigint | boolean | string }
  | { type: typeof GgufType.ARRAY; itemType: ScalarType; items: readonly (number | bigint | boolean | string)[] };

export const gguf = {
  u32: (value: number): GgufValue => ({ type: GgufType.UINT32, value }),
  i32: (value: number): GgufValue => ({ type: GgufType.INT32, value }),
  f32: (value: number): GgufValue => ({ type: GgufType.FLOAT32, value }),
  bool: (value: boolean): GgufValue => ({ type: GgufType.BOOL, value }),
  str: (value: string): GgufValue => ({ type: GgufType.STRING, value }),
  strings: (items: readonly string[]): GgufValue => ({ type: GgufType.ARRAY, itemType: GgufType.STRING, items }),
  i32s: (items: readonly number[]): GgufValue => ({ type: GgufType.ARRAY, itemType: GgufType.INT32, items }),
};

export interface GgufTensor {
  name: string;
  /** ggml's order: the first dimension is the innermost (a row's length). */
  dims: readonly number[];
  type: GgmlTypeId;
  /**
   * Writes the tensor's bytes, in pieces, through `write`; the pieces must
   * come to exactly tensorBytes(dims, type).
   */
  fill(write: (bytes: Uint8Array) => void): void;
}

export function tensorBytes(dims: readonly number[], type: GgmlTypeId): number {
  const { elements, bytes } = BLOCK[type];
  if (dims[0]! % elements !== 0) throw new Error(`A row of ${dims[0]} cannot be cut into blocks of ${elements}.`);
  return (dims.reduce((n, d) => n * d, 1) / elements) * bytes;
}

const align = (n: number, to: number) => Math.ceil(n / to) * to;

/** A growing byte buffer for the header, which is small next to the tensors. */
class Bytes {
  private buf = new Uint8Array(1 << 16);
  private view = new DataView(this.buf.buffer);
  length = 0;
  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }
  u8(v: number): void {
    this.room(1);
    this.view.setUint8(this.length++, v);
  }
  u32(v: number): void {
    this.room(4);
    this.view.setUint32(this.length, v, true);
    this.length += 4;
  }
  u64(v: number | bigint): void {
    this.room(8);
    this.view.setBigUint64(this.length, BigInt(v), true);
    this.length += 8;
  }
  scalar(type: ScalarType, v: number | bigint | boolean | string): void {
    this.room(8);
    const at = this.length;
    const d = this.view;
    switch (type) {
      case GgufType.UINT8:
      case GgufType.INT8:
      case GgufType.BOOL:
        if (type === GgufType.INT8) d.setInt8(at, Number(v));
        else d.setUint8(at, Number(v));
        this.length += 1;
        return;
      case GgufType.UINT16:
      case GgufType.INT16:
        if (type === GgufType.INT16) d.setInt16(at, Number(v), true);
        else d.setUint16(at, Number(v), true);
        this.length += 2;
        return;
      case GgufType.UINT32:
        d.setUint32(at, Number(v), true);
        this.length += 4;
        return;
      case GgufType.INT32:
        d.setInt32(at, Number(v), true);
        this.length += 4;
        return;
      case GgufType.FLOAT32:
        d.setFloat32(at, Number(v), true);
        this.length += 4;
        return;
      case GgufType.UINT64:
        d.setBigUint64(at, BigInt(v), true);
        this.length += 8;
        return;
      case GgufType.INT64:
        d.setBigInt64(at, BigInt(v), true);
        this.length += 8;
        return;
      case GgufType.FLOAT64:
        d.setFloat64(at, Number(v), true);
        this.length += 8;
        return;
      case GgufType.STRING:
        this.string(String(v));
        return;
    }
  }
  string(s: string): void {
    const utf8 = Buffer.from(s, 'utf8');
    this.u64(utf8.length);
    this.room(utf8.length);
    this.buf.set(utf8, this.length);
    this.length += utf8.length;
  }
  pad(to: number): void {
    const n = align(this.length, to) - this.length;
    this.room(n);
    this.buf.fill(0, this.length, this.length + n);
    this.length += n;
  }
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

/** The header, metadata and tensor infos, padded to where the data begins. */
export function ggufHeader(metadata: ReadonlyMap<string, GgufValue>, tensors: readonly Omit<GgufTensor, 'fill'>[], alignment = GGUF_ALIGNMENT): Uint8Array {
  const b = new Bytes();
  b.u32(GGUF_MAGIC);
  b.u32(GGUF_VERSION);
  b.u64(tensors.length);
  const kv = new Map(metadata);
  if (alignment !== GGUF_ALIGNMENT) kv.set('general.alignment', gguf.u32(alignment));
  b.u64(kv.size);
  for (const [key, v] of kv) {
    b.string(key);
    b.u32(v.type);
    if (v.type === GgufType.ARRAY) {
      b.u32(v.itemType);
      b.u64(v.items.length);
      for (const item of v.items) b.scalar(v.itemType, item);
    } else b.scalar(v.type, v.value);
  }
  let offset = 0;
  for (const t of tensors) {
    b.string(t.name);
    b.u32(t.dims.length);
    for (const d of t.dims) b.u64(d);
    b.u32(t.type);
    b.u64(offset);
    offset = align(offset + tensorBytes(t.dims, t.type), alignment);
  }
  b.pad(alignment);
  return b.bytes();
}

/**
 * Writes a GGUF file at `path` (through a temporary file beside it, renamed
 * once whole, so a file at `path` is always complete). Returns its size.
 */
export function writeGguf(path: string, metadata: ReadonlyMap<string, GgufValue>, tensors: readonly GgufTensor[], alignment = GGUF_ALIGNMENT): number {
  const partial = `${path}.partial`;
  const fd = openSync(partial, 'w');
  let at = 0;
  const write = (bytes: Uint8Array) => {
    let done = 0;
    while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, at + done);
    at += bytes.length;
  };
  try {
    write(ggufHeader(metadata, tensors, alignment));
    const zeros = new Uint8Array(alignment);
    for (const t of tensors) {
      const start = at;
      t.fill(write);
      const written = at - start;
      const expected = tensorBytes(t.dims, t.type);
      if (written !== expected) throw new Error(`Tensor ${t.name} wrote ${written} bytes, not ${expected}.`);
      write(zeros.subarray(0, align(at, alignment) - at));
    }
  } finally {
    closeSync(fd);
  }
  renameSync(partial, path);
  return at;
}
