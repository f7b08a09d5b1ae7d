"use strict";
// Random ids exactly as pi 1.6.0 makes them: entry ids are the first 8 hex digits of a v4
// UUID (collision-checked), session ids are UUIDv7 (pi-ai `uuidv7`).

const { randomFillSync, randomUUID } = require("node:crypto");

// The first 8 hex digits of a v4 UUID are 32 random bits from the CSPRNG (the version
// nibble comes later), so 4 random bytes as hex have the same distribution; drawn from a
// pool, that is ~8x cheaper than serialising a whole UUID and slicing it.
const POOL = new Uint8Array(4096);
let poolPos = POOL.length;
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** `randomUUID().slice(0, 8)`. */
function shortId() {
  if (poolPos > POOL.length - 4) {
    randomFillSync(POOL);
    poolPos = 0;
  }
  const p = poolPos;
  poolPos += 4;
  return HEX[POOL[p]] + HEX[POOL[p + 1]] + HEX[POOL[p + 2]] + HEX[POOL[p + 3]];
}

/** `generateId(byId)`: `has` tells whether an id is taken. */
function generateId(has) {
  for (let i = 0; i < 100; i++) {
    const id = shortId();
    if (!has(id)) return id;
  }
  return randomUUID();
}

let lastMs = Number.NaN;
let lastIso = "";

/**
 * `new Date().toISOString()`, formatted once per millisecond: appends in a burst share
 * the string instead of each building a Date and formatting it (~10x cheaper).
 */
function nowIso() {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}

const MAX_SEQUENCE = (1n << 41n) - 1n;
let lastTimestamp = -1;
let sequence;

/** pi-ai's monotonic UUIDv7. */
function uuidv7() {
  const effectiveTimestamp = Math.max(Date.now(), lastTimestamp);
  lastTimestamp = effectiveTimestamp;
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  if (sequence === undefined) {
    sequence =
      (BigInt(bytes[1]) << 32n) |
      (BigInt(bytes[2]) << 24n) |
      (BigInt(bytes[3]) << 16n) |
      (BigInt(bytes[4]) << 8n) |
      BigInt(bytes[5]);
  } else {
    if (sequence === MAX_SEQUENCE) throw new RangeError("UUIDv7 generator sequence exhausted");
    sequence++;
  }
  const timestamp = BigInt(effectiveTimestamp);
  for (let index = 5; index >= 0; index--) bytes[index] = Number(timestamp >> BigInt((5 - index) * 8)) & 0xff;
  bytes[6] = 0x70 | Number((sequence >> 37n) & 0x0fn);
  bytes[7] = Number((sequence >> 29n) & 0xffn);
  bytes[8] = 0x80 | Number((sequence >> 23n) & 0x3fn);
  bytes[9] = Number((sequence >> 15n) & 0xffn);
  bytes[10] = Number((sequence >> 7n) & 0xffn);
  bytes[11] = Number((sequence & 0x7fn) << 1n) | (bytes[11] & 0x01);
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0"));
  return `${hex.slice(0, 4).join("")}-${hex.slice(4, 6).join("")}-${hex.slice(6, 8).join("")}-${hex.slice(8, 10).join("")}-${hex.slice(10).join("")}`;
}

module.exports = { generateId, nowIso, shortId, uuidv7 };
