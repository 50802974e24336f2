/** A seeded generator of uniform numbers in [0, 1) (mulberry32): the same seed, the same numbers. */
export function seededRandom(seed: number): () => number {
  let state = Math.trunc(seed) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The uniform number for position `index()` of a reply sampled with `seed`:
 * one number per position, read when the position is decided. A reply's
 * draws then depend only on its seed and on where each token falls, not on
 * how its tokens were written (one request alone or a sequence of a batch,
 * a decode step or a verify pass with any draft), so the same seed writes
 * the same reply every way.
 */
export function replyRandom(seed: number, index: () => number): () => number {
  return () => {
    // A murmur3 finalizer over the seed and the position: neighbouring positions and seeds start far apart.
    let h = Math.imul((Math.trunc(seed) >>> 0) ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index() + 1, 0xc2b2ae35);
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return seededRandom((h ^ (h >>> 16)) >>> 0)();
  };
}
