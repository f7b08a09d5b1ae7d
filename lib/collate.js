"use strict";
// `localeCompare` order of session file names, without ICU where the answer is known
// without it.
//
// The first `localeCompare` of a process builds ICU's collator: 6-9 ms, and 26-32 ms with
// a cold page cache (it reads 14 MB of ICU data from the node binary). For a listing that
// is most of what is left once the rows come from the listing index. V8 itself does not
// use that collator for printable ASCII under English and a few other default locales: it
// compares by the Unicode Collation Algorithm weights of those characters (V8's
// `kCollationWeightsL1`/`L3` in src/objects/intl-objects.cc, `TryFastCompareStrings`). The
// same weights, as sort keys, give the same order here; any other name, or any other
// default locale, sorts with `localeCompare` as before. The core sorts a folder's names
// (`discovery::jsonl_names_descending`, the same weights); this file decides whether it
// may, and breaks `listAll`'s rare ties.

// Primary (L1) weights of 0x20..0x7E: V8's table, ranks of the DUCET primary weights.
// Letters share a weight across case; L3 (case) is 2 for A-Z and 1 for all others.
const L1 = [
  6, 12, 16, 28, 38, 29, 27, 15, 17, 18, 24, 32, 9, 8, 14, 25, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 11, 10, 33, 34,
  35, 13, 23, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74,
  19, 26, 20, 31, 7, 30, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72,
  73, 74, 21, 36, 22, 37,
];
const PRINTABLE = /^[\x20-\x7e]*$/;

/**
 * Whether the default locale is one whose `localeCompare` of printable ASCII is V8's
 * weight table: ICU takes the first of LC_ALL, LC_MESSAGES, LANG that is set (even when
 * empty), and "C"/"POSIX" or none at all mean en-US. Only Linux, where that is how ICU
 * finds it, and not when Node was told another locale.
 */
function englishDefault(env = process.env, platform = process.platform, argv = process.execArgv) {
  if (platform !== "linux") return false;
  const flags = `${argv.join(" ")} ${env.NODE_OPTIONS ?? ""}`;
  if (flags.includes("--icu-locale")) return false;
  const id = env.LC_ALL ?? env.LC_MESSAGES ?? env.LANG;
  return id === undefined || /^(?:C|POSIX|C\.[\w-]+|en(?:_[A-Z]{2})?(?:\.[\w-]+)?)$/.test(id);
}

/** A sort key whose code-unit order is the collation order: the L1 weights, then L3. */
function keyOf(name) {
  let l1 = "";
  let l3 = "";
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    l1 += String.fromCharCode(L1[c - 0x20]);
    l3 += c >= 0x41 && c <= 0x5a ? "\x02" : "\x01";
  }
  // L1 decides first; a name whose L1 is a prefix of another's sorts first, which the
  // L3 units (1, 2) below every L1 weight (6 and up) keep true across the join.
  return l1 + l3;
}

let english;

/** Whether `b.localeCompare(a)` order of printable ASCII names is known without ICU. */
function asciiOrderKnown() {
  english ??= englishDefault();
  return english;
}

/** `a.localeCompare(b)`, as a sign (for the rare ties of `listAll`'s sort). */
function compare(a, b) {
  if (!asciiOrderKnown() || !PRINTABLE.test(a) || !PRINTABLE.test(b)) return a.localeCompare(b);
  const x = keyOf(a);
  const y = keyOf(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

module.exports = { asciiOrderKnown, compare, englishDefault };
