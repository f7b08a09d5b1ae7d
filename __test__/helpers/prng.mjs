// Seeded PRNG (mulberry32) and helpers. Same seed, same sequence, on every machine.

export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Rng {
  constructor(seed) {
    this.seed = seed;
    this.float = mulberry32(seed);
  }
  /** integer in [0, n) */
  int(n) {
    return Math.floor(this.float() * n);
  }
  /** integer in [lo, hi] */
  range(lo, hi) {
    return lo + this.int(hi - lo + 1);
  }
  bool(p = 0.5) {
    return this.float() < p;
  }
  pick(arr) {
    return arr[this.int(arr.length)];
  }
  /** pick from [[weight, value], ...] */
  weighted(pairs) {
    const total = pairs.reduce((s, [w]) => s + w, 0);
    let x = this.float() * total;
    for (const [w, v] of pairs) {
      if ((x -= w) < 0) return v;
    }
    return pairs[pairs.length - 1][1];
  }
}
