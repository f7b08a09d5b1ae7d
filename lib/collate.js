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
// same weights give the same order here; any other name, or any other
// default locale, sorts with `localeCompare` as before. The core holds the weights and
// sorts a folder's names (`discovery::jsonl_names_descending`) or compares two
// (`collateNames`, for `listAll`'s rare ties); this file decides whether it may. Only on
// Node: another runtime's `localeCompare` is its own engine's (Bun: JavaScriptCore's ICU,
// whatever LANG says), so there it is always asked (runtime.js).

const { binding } = require("./native.js");
const { NODE } = require("./runtime.js");

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

let english;

/** Whether `b.localeCompare(a)` order of printable ASCII names is known without ICU (V8's table, on Node). */
function asciiOrderKnown() {
  english ??= NODE && englishDefault();
  return english;
}

/** `a.localeCompare(b)`, as a sign (for the rare ties of `listAll`'s sort). */
function compare(a, b) {
  if (!asciiOrderKnown() || !PRINTABLE.test(a) || !PRINTABLE.test(b)) return a.localeCompare(b);
  return binding.collateNames(a, b);
}

module.exports = { asciiOrderKnown, compare, englishDefault };
