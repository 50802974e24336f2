import { seededRandom } from '../core/random';

/**
 * A small seeded random source. Every generated sample is a pure function of
 * its seed, so a sweep regenerates the same documents after a reload or on
 * another machine, and only results need to be stored.
 */
export class Rng {
  private readonly random: () => number;

  constructor(seed: number) {
    this.random = seededRandom(seed);
  }

  /** Uniform in [0, 1) (mulberry32). */
  next(): number {
    return this.random();
  }

  /** Integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** Uniform in [min, max). */
  between(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** Fisher–Yates, in place. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  }

  /** A random version-4 UUID, lower-case. */
  uuid(): string {
    const hex = (n: number) => Array.from({ length: n }, () => this.int(0, 15).toString(16)).join('');
    return `${hex(8)}-${hex(4)}-4${hex(3)}-${'89ab'[this.int(0, 3)]}${hex(3)}-${hex(12)}`;
  }

  /** A number with exactly `digits` digits (no leading zero). */
  digits(digits: number): string {
    return String(this.int(10 ** (digits - 1), 10 ** digits - 1));
  }
}

/** A 32-bit seed from any string (FNV-1a), so that each sample gets its own stream. */
export function hashSeed(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
