// The macOS addons, cross-built here as the musl ones are (`napi build -x`: cargo-zigbuild with
// zig 0.14.1, both from PyPI in .cache/zig/; zig brings the macOS libc headers and libSystem
// stubs, so no Apple SDK is needed), then checked by reading the Mach-O file (no Apple tools, no
// dependencies):
//   - a thin 64-bit Mach-O dylib (or bundle) for the right CPU (x86_64 / arm64), its segments
//     inside the file;
//   - the minimum macOS (LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX) what Node 20 needs:
//     10.15 on x64, 11.0 on arm64 (MACOSX_DEPLOYMENT_TARGET is always set for the build);
//   - napi_register_module_v1 exported (export trie, and defined in the symbol table);
//   - LC_LOAD_DYLIB (and weak/re-export/upward) only system libraries (/usr/lib/, /System/Library/);
//   - the N-API functions left undefined for the host to provide at load time: every bind of a
//     `_napi_*` symbol (bind and lazy-bind opcodes, or chained-fixup imports: what dyld reads) a
//     flat lookup (-2), none bound to a library, unless the whole image has a flat namespace (no
//     MH_TWOLEVEL); every other bind to one of the image's own LC_LOAD_DYLIBs;
//   - arm64 (macOS runs no unsigned arm64 code): an ad-hoc code signature (zig's linker, as
//     Apple's, signs arm64 output): a CodeDirectory with CS_ADHOC covering the whole file up to
//     the signature, every page hash recomputed. x64 needs none; one there is verified too.
// They are never loaded here (no macOS): the release workflow builds them on macOS runners with
// Apple's linker, checks them with this script (`check`) and runs the tests on Node 20/22/24.
//
//   node scripts/darwin.mjs [build] [<target>...]   npm run build:darwin: build and check (default:
//                                                   both targets; cold, ~1 min for x64, then
//                                                   ~25 s for arm64 on 2 cores)
//   node scripts/darwin.mjs check [<target>[=<file>]...]
//                                                   the checks alone, on .node files built before
//                                                   (any host: plain Node); `=<file>` checks that
//                                                   file as the target's artifact
//
// rustc warns that `xcrun` is missing to find the MacOSX SDK: zig links against its own stubs,
// the warning is harmless. Without MACOSX_DEPLOYMENT_TARGET zig would stamp minos 13.0 on both.
// zig's linker, unlike Apple's, leaves every Rust symbol exported (rustc's exported-symbols list
// is not applied; ~2,700 exports, ~180 KiB of export trie) and writes ordinal 0 rather than 0xfe
// into the symbol table for the N-API functions; neither matters to dyld.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { REPO } from "./node-bin.mjs";
import { napiBuildArgs } from "./steps.mjs";

const TARGETS = {
  "x86_64-apple-darwin": {
    file: "pi-session-native.darwin-x64.node",
    cpu: 0x01000007,
    cpuName: "x86_64",
    minos: "10.15",
    mustSign: false,
  },
  "aarch64-apple-darwin": {
    file: "pi-session-native.darwin-arm64.node",
    cpu: 0x0100000c,
    cpuName: "arm64",
    minos: "11.0",
    mustSign: true,
  },
};

const MH_MAGIC_64 = 0xfeedfacf;
const MH_DYLIB = 6;
const MH_BUNDLE = 8;
const MH_TWOLEVEL = 0x80;
const MH_FORCE_FLAT = 0x100;
const PLATFORM_MACOS = 1;
const DYNAMIC_LOOKUP_ORDINAL = 0xfe; // n_desc library ordinal of a flat-looked-up undefined symbol
const BIND_SPECIAL_DYLIB_FLAT_LOOKUP = -2;
const LC = {
  SYMTAB: 0x2,
  DYSYMTAB: 0xb,
  LOAD_DYLIB: 0xc,
  LOAD_WEAK_DYLIB: 0x80000018,
  REEXPORT_DYLIB: 0x8000001f,
  LAZY_LOAD_DYLIB: 0x20,
  LOAD_UPWARD_DYLIB: 0x80000023,
  SEGMENT_64: 0x19,
  CODE_SIGNATURE: 0x1d,
  DYLD_INFO: 0x22,
  DYLD_INFO_ONLY: 0x80000022,
  VERSION_MIN_MACOSX: 0x24,
  BUILD_VERSION: 0x32,
  DYLD_EXPORTS_TRIE: 0x80000033,
  DYLD_CHAINED_FIXUPS: 0x80000034,
};
const DYLIB_CMDS = new Set([
  LC.LOAD_DYLIB,
  LC.LOAD_WEAK_DYLIB,
  LC.REEXPORT_DYLIB,
  LC.LAZY_LOAD_DYLIB,
  LC.LOAD_UPWARD_DYLIB,
]);

const mode = ["build", "check"].includes(process.argv[2]) ? process.argv[2] : "build";
const named = process.argv.slice(process.argv[2] === mode ? 3 : 2);
const host = `${process.platform}-${process.arch}`;
if (mode === "build" && host !== "linux-x64") {
  console.log(`[darwin] skipped: the cross build needs a linux-x64 host (this is ${host})`);
  process.exit(0);
}

const failures = [];
const check = (ok, what) => {
  console.log(`  ${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failures.push(what);
};

const t0 = Date.now();
if (mode === "build") {
  const r = spawnSync("bash", ["scripts/cross-setup.sh", "darwin"], { cwd: REPO, stdio: "inherit" });
  if (r.status !== 0) throw new Error("scripts/cross-setup.sh darwin failed");
}
const wanted = (named.length ? named : Object.keys(TARGETS)).map((arg) => {
  const [target, file] = arg.split("=");
  if (!TARGETS[target]) throw new Error(`unknown target ${target}; known: ${Object.keys(TARGETS).join(", ")}`);
  if (file && mode !== "check") throw new Error("<target>=<file> is for `check` only");
  return { target, path: file ? resolve(file) : join(REPO, TARGETS[target].file) };
});

for (const { target, path } of wanted) {
  const t = TARGETS[target];
  const t1 = Date.now();
  if (mode === "build") {
    const env = {
      ...process.env,
      PATH: `${join(REPO, ".cache", "zig", "bin")}${delimiter}${process.env.PATH}`,
      MACOSX_DEPLOYMENT_TARGET: t.minos,
    };
    const r = spawnSync("npx", napiBuildArgs(target, { crossCompile: true }), { cwd: REPO, env, stdio: "inherit" });
    if (r.status !== 0) throw new Error(`napi build --target ${target} failed`);
  }
  let size;
  try {
    size = statSync(path).size;
  } catch (e) {
    check(false, `${path}: ${e.code ?? e.message}`);
    continue;
  }
  console.log(
    `\n[darwin] ${path === join(REPO, t.file) ? t.file : path} as ${target}: ${(size / 1024).toFixed(0)} KiB` +
      (mode === "build" ? `, built in ${((Date.now() - t1) / 1000).toFixed(1)} s` : ""),
  );
  let m;
  try {
    m = parseMachO(readFileSync(path));
  } catch (e) {
    check(false, `a readable thin 64-bit little-endian Mach-O: ${e.message}`);
    continue;
  }
  checkImage(m, t, size);
}

console.log(`\n[darwin] ${((Date.now() - t0) / 1000).toFixed(1)} s`);
if (failures.length) {
  console.error(`[darwin] ${failures.length} check(s) failed`);
  process.exit(1);
}

function checkImage(m, t, size) {
  const kind = { [MH_DYLIB]: "MH_DYLIB", [MH_BUNDLE]: "MH_BUNDLE" }[m.filetype];
  check(!!kind, `64-bit Mach-O ${kind ?? `filetype ${m.filetype} (not a dylib or bundle)`}`);
  check(m.cputype === t.cpu, `CPU ${hex(m.cputype)} is ${t.cpuName} (${hex(t.cpu)})`);
  check(m.segmentsInFile, "every segment's file range inside the file");
  check(size > 512 * 1024 && size < 8 * 1024 * 1024, "size between 0.5 and 8 MiB");

  const v = m.buildVersion ?? m.versionMin;
  check(
    v?.platform === PLATFORM_MACOS && v.minos === t.minos,
    v
      ? `${v.source}: platform ${v.platform === PLATFORM_MACOS ? "macos" : v.platform}, minos ${v.minos} (want ${t.minos}), sdk ${v.sdk}`
      : "LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX present",
  );

  const reg = m.exports.get("_napi_register_module_v1");
  const regSym = m.symbols.find((s) => s.name === "_napi_register_module_v1");
  const text = m.sections.find((s) => s.segname === "__TEXT" && s.sectname === "__text");
  check(
    reg !== undefined && (reg.flags & 0x1b) === 0 && !!text && reg.address >= text.addr && reg.address < text.end,
    reg
      ? `_napi_register_module_v1 exported at ${hex(reg.address)} in __TEXT,__text (${m.exports.size} exports in the trie)`
      : `_napi_register_module_v1 in the export trie (${m.exports.size} exports)`,
  );
  check(
    !!regSym && regSym.defined && regSym.external && regSym.value === reg?.address,
    "_napi_register_module_v1 an external defined symbol in the symbol table, at the exported address",
  );

  const foreign = m.dylibs.filter((d) => !/^\/usr\/lib\/|^\/System\/Library\//.test(d.name));
  check(
    m.dylibs.length > 0 && foreign.length === 0 && m.dylibs.some((d) => d.name === "/usr/lib/libSystem.B.dylib"),
    `linked libraries all system ones, libSystem among them (${m.dylibs.map((d) => d.name).join(", ")})`,
  );

  // dyld binds from the bind information (opcodes or chained imports), where an N-API function
  // must be a flat lookup (-2: searched in every loaded image, node's own binary first). The
  // symbol table's library ordinal is for tools: Apple's ld writes 0xfe (DYNAMIC_LOOKUP_ORDINAL)
  // there, zig 0 (none); a real library's ordinal would be wrong. A flat-namespace image (no
  // MH_TWOLEVEL, or MH_FORCE_FLAT) looks every symbol up everywhere anyway.
  const flat = !(m.flags & MH_TWOLEVEL) || (m.flags & MH_FORCE_FLAT) !== 0;
  const napiUndef = m.symbols.filter((s) => s.undefined && s.external && s.name.startsWith("_napi_"));
  const napiDefined = m.symbols.filter((s) => s.defined && s.external && s.name.startsWith("_napi_"));
  const napiBinds = m.binds.filter((b) => b.name.startsWith("_napi_"));
  const boundNames = new Set(napiBinds.map((b) => b.name));
  const wrong = [
    ...napiUndef
      .filter((s) => s.ordinal !== DYNAMIC_LOOKUP_ORDINAL && s.ordinal !== 0)
      .map((s) => `${s.name} ordinal ${s.ordinal}`),
    ...napiUndef.filter((s) => !boundNames.has(s.name)).map((s) => `${s.name} never bound`),
    ...napiBinds
      .filter((b) => b.ordinal !== BIND_SPECIAL_DYLIB_FLAT_LOOKUP)
      .map((b) => `${b.name} bound to ordinal ${b.ordinal}`),
  ];
  const ordinals = [...new Set(napiUndef.map((s) => hex(s.ordinal).slice(-2)))].join(", ");
  check(
    napiUndef.length >= 20 && napiDefined.length === 1,
    `${napiUndef.length} _napi_* functions undefined, only napi_register_module_v1 defined (${napiDefined.map((s) => s.name).join(", ")})`,
  );
  check(
    flat || wrong.length === 0,
    flat
      ? `flat-namespace image (flags ${hex(m.flags)}): every undefined symbol is looked up in all loaded images`
      : `two-level image: ${napiBinds.length} binds of the ${napiUndef.length} _napi_* (${m.bindSource}) all flat lookups ` +
          `(symbol-table ordinal ${ordinals})${wrong.length ? `; not: ${wrong.slice(0, 3).join(", ")}` : ""}`,
  );
  // 0: the image itself; -3: a weak definition looked up in every image (C++-style coalescing).
  const stray = m.binds.filter(
    (b) =>
      !b.name.startsWith("_napi_") && !(b.ordinal >= 1 && b.ordinal <= m.dylibs.length) && ![0, -3].includes(b.ordinal),
  );
  check(
    stray.length === 0,
    `every other bind (${m.binds.length - napiBinds.length}) to one of the ${m.dylibs.length} linked libraries or the image itself` +
      (stray.length ? `; not: ${stray.slice(0, 3).map((b) => `${b.name} ordinal ${b.ordinal}`)}` : ""),
  );

  const sig = m.codeSignature;
  if (!sig && !t.mustSign) {
    console.log("  --   no code signature (x86_64 macOS does not require one)");
    return;
  }
  check(!!sig, "LC_CODE_SIGNATURE present (arm64 macOS runs no unsigned code)");
  if (!sig) return;
  let cs;
  try {
    cs = verifySignature(m.buf, sig);
  } catch (e) {
    check(false, `code signature readable: ${e.message}`);
    return;
  }
  check(
    cs.adhoc && !cs.cms,
    `ad-hoc signature (flags ${hex(cs.flags)}${cs.linkerSigned ? ", linker-signed" : ""}, identifier ${cs.ident})`,
  );
  check(
    cs.codeLimit === sig.dataoff && sig.dataoff + sig.datasize <= m.buf.length,
    `signature covers the file up to itself (code limit ${cs.codeLimit}, signature at ${sig.dataoff})`,
  );
  check(
    cs.badPages.length === 0,
    `${cs.nCodeSlots} page hashes (${cs.hashName}, ${cs.pageSize}-byte pages) match the file` +
      (cs.badPages.length ? `; differ: pages ${cs.badPages.slice(0, 5).join(", ")}` : ""),
  );
}

// --- Mach-O ------------------------------------------------------------------------------------

function hex(n) {
  return `0x${n.toString(16).padStart(8, "0")}`;
}

/** xxxx.yy.zz nibbles as macOS writes them, the patch level left out when 0. */
function version(v) {
  const s = `${v >>> 16}.${(v >>> 8) & 0xff}`;
  return v & 0xff ? `${s}.${v & 0xff}` : s;
}

function cstring(buf, at, end = buf.length) {
  let e = at;
  while (e < end && buf[e] !== 0) e++;
  if (e >= end) throw new Error(`unterminated string at ${at}`);
  return buf.toString("latin1", at, e);
}

function range(buf, off, size, what) {
  if (off < 0 || size < 0 || off + size > buf.length) throw new Error(`${what} (${off}+${size}) outside the file`);
}

/** ULEB128/SLEB128 readers over buf from pos.p (numbers, exact up to 2^53). */
function uleb(buf, pos) {
  let result = 0;
  let scale = 1;
  for (;;) {
    if (pos.p >= buf.length) throw new Error("ULEB128 past the end");
    const b = buf[pos.p++];
    result += (b & 0x7f) * scale;
    scale *= 128;
    if (!(b & 0x80)) return result;
    if (scale > 2 ** 64) throw new Error("ULEB128 too long");
  }
}

function sleb(buf, pos) {
  let result = 0;
  let scale = 1;
  let b;
  do {
    if (pos.p >= buf.length) throw new Error("SLEB128 past the end");
    b = buf[pos.p++];
    result += (b & 0x7f) * scale;
    scale *= 128;
    if (scale > 2 ** 64) throw new Error("SLEB128 too long");
  } while (b & 0x80);
  return b & 0x40 ? result - scale : result;
}

function parseMachO(buf) {
  if (buf.length < 32) throw new Error("shorter than a Mach-O header");
  const magic = buf.readUInt32LE(0);
  if (magic !== MH_MAGIC_64) {
    const what =
      buf.readUInt32BE(0) === 0xcafebabe
        ? "a universal (fat) file"
        : buf.readUInt32BE(0) === 0x7f454c46
          ? "an ELF file"
          : buf.readUInt16LE(0) === 0x5a4d
            ? "a PE file"
            : `magic ${hex(magic)}`;
    throw new Error(`not MH_MAGIC_64: ${what}`);
  }
  const m = {
    buf,
    cputype: buf.readUInt32LE(4),
    filetype: buf.readUInt32LE(12),
    flags: buf.readUInt32LE(24),
    segments: [],
    sections: [],
    dylibs: [],
    symbols: [],
    exports: new Map(),
    binds: [],
    bindSource: "no bind information",
  };
  const ncmds = buf.readUInt32LE(16);
  const sizeofcmds = buf.readUInt32LE(20);
  range(buf, 32, sizeofcmds, "load commands");
  let off = 32;
  let symtab;
  let dyldInfo;
  let exportsTrie;
  let chained;
  for (let i = 0; i < ncmds; i++) {
    if (off + 8 > 32 + sizeofcmds) throw new Error(`load command ${i} past sizeofcmds`);
    const cmd = buf.readUInt32LE(off);
    const cmdsize = buf.readUInt32LE(off + 4);
    if (cmdsize < 8 || cmdsize % 8 || off + cmdsize > 32 + sizeofcmds)
      throw new Error(`load command ${i} (${hex(cmd)}) has a bad size ${cmdsize}`);
    const u32 = (at) => buf.readUInt32LE(off + at);
    const u64 = (at) => Number(buf.readBigUInt64LE(off + at));
    if (cmd === LC.SEGMENT_64) {
      const seg = {
        segname: buf.toString("latin1", off + 8, off + 24).replace(/\0.*$/s, ""),
        vmaddr: u64(24),
        vmsize: u64(32),
        fileoff: u64(40),
        filesize: u64(48),
      };
      m.segments.push(seg);
      const nsects = u32(64);
      if (72 + nsects * 80 > cmdsize) throw new Error(`segment ${seg.segname}: sections past the command`);
      for (let s = 0; s < nsects; s++) {
        const so = off + 72 + s * 80;
        const name = (at) => buf.toString("latin1", so + at, so + at + 16).replace(/\0.*$/s, "");
        const addr = Number(buf.readBigUInt64LE(so + 32));
        m.sections.push({
          sectname: name(0),
          segname: name(16),
          addr,
          end: addr + Number(buf.readBigUInt64LE(so + 40)),
        });
      }
    } else if (DYLIB_CMDS.has(cmd)) {
      const nameOff = u32(8);
      if (nameOff < 24 || nameOff >= cmdsize) throw new Error(`dylib command ${i}: name offset ${nameOff}`);
      m.dylibs.push({ cmd, name: cstring(buf, off + nameOff, off + cmdsize) });
    } else if (cmd === LC.BUILD_VERSION) {
      m.buildVersion = { source: "LC_BUILD_VERSION", platform: u32(8), minos: version(u32(12)), sdk: version(u32(16)) };
    } else if (cmd === LC.VERSION_MIN_MACOSX) {
      m.versionMin = {
        source: "LC_VERSION_MIN_MACOSX",
        platform: PLATFORM_MACOS,
        minos: version(u32(8)),
        sdk: version(u32(12)),
      };
    } else if (cmd === LC.SYMTAB) {
      symtab = { symoff: u32(8), nsyms: u32(12), stroff: u32(16), strsize: u32(20) };
    } else if (cmd === LC.DYLD_INFO || cmd === LC.DYLD_INFO_ONLY) {
      dyldInfo = {
        bind: [u32(16), u32(20)],
        lazyBind: [u32(32), u32(36)],
        export: [u32(40), u32(44)],
      };
    } else if (cmd === LC.DYLD_EXPORTS_TRIE) {
      exportsTrie = [u32(8), u32(12)];
    } else if (cmd === LC.DYLD_CHAINED_FIXUPS) {
      chained = [u32(8), u32(12)];
    } else if (cmd === LC.CODE_SIGNATURE) {
      m.codeSignature = { dataoff: u32(8), datasize: u32(12) };
    }
    off += cmdsize;
  }
  if (off !== 32 + sizeofcmds) throw new Error(`load commands end at ${off}, sizeofcmds says ${32 + sizeofcmds}`);
  m.segmentsInFile = m.segments.every((s) => s.fileoff + s.filesize <= buf.length);

  if (symtab) {
    range(buf, symtab.symoff, symtab.nsyms * 16, "symbol table");
    range(buf, symtab.stroff, symtab.strsize, "string table");
    for (let i = 0; i < symtab.nsyms; i++) {
      const so = symtab.symoff + i * 16;
      const strx = buf.readUInt32LE(so);
      const type = buf[so + 4];
      const desc = buf.readUInt16LE(so + 6);
      if (type & 0xe0) continue; // N_STAB debugging entries
      if (strx >= symtab.strsize) throw new Error(`symbol ${i}: name offset ${strx} past the string table`);
      m.symbols.push({
        name: cstring(buf, symtab.stroff + strx, symtab.stroff + symtab.strsize),
        external: (type & 0x01) !== 0,
        undefined: (type & 0x0e) === 0x0, // N_UNDF
        defined: (type & 0x0e) === 0xe, // N_SECT
        ordinal: (desc >> 8) & 0xff, // GET_LIBRARY_ORDINAL
        value: Number(buf.readBigUInt64LE(so + 8)),
      });
    }
  }
  const trie = exportsTrie ?? dyldInfo?.export;
  if (trie?.[1]) {
    range(buf, trie[0], trie[1], "export trie");
    readExportTrie(buf.subarray(trie[0], trie[0] + trie[1]), m.exports);
  }
  if (chained?.[1]) {
    range(buf, chained[0], chained[1], "chained fixups");
    m.binds = readChainedImports(buf.subarray(chained[0], chained[0] + chained[1]));
    m.bindSource = "chained-fixup imports";
  } else if (dyldInfo) {
    for (const [o, s, lazy] of [
      [...dyldInfo.bind, false],
      [...dyldInfo.lazyBind, true],
    ]) {
      if (!s) continue;
      range(buf, o, s, "bind opcodes");
      m.binds.push(...readBindOpcodes(buf.subarray(o, o + s), lazy));
    }
    m.bindSource = "bind and lazy-bind opcodes";
  }
  return m;
}

/** Every terminal of the export trie: name -> { flags, address } (address relative to the image). */
function readExportTrie(t, out) {
  const seen = new Set();
  const walk = (nodeOff, prefix) => {
    if (seen.has(nodeOff) || nodeOff >= t.length) throw new Error(`export trie node ${nodeOff} loops or is outside`);
    seen.add(nodeOff);
    const pos = { p: nodeOff };
    const terminalSize = uleb(t, pos);
    const children = pos.p + terminalSize;
    if (terminalSize) {
      const flags = uleb(t, pos);
      out.set(prefix, { flags, address: flags & 0x08 ? -1 : uleb(t, pos) }); // 0x08: re-export
    }
    pos.p = children;
    if (pos.p >= t.length) throw new Error("export trie node past the end");
    const n = t[pos.p++];
    for (let i = 0; i < n; i++) {
      const edge = cstring(t, pos.p);
      pos.p += edge.length + 1;
      walk(uleb(t, pos), prefix + edge);
    }
  };
  walk(0, "");
}

/** { name, ordinal } of each bind the dyld-info opcodes make; lazy binds are separated by DONE. */
function readBindOpcodes(o, lazy) {
  const binds = [];
  const pos = { p: 0 };
  let ordinal = 0;
  let name = "";
  const bind = () => binds.push({ name, ordinal });
  while (pos.p < o.length) {
    const byte = o[pos.p++];
    const op = byte & 0xf0;
    const imm = byte & 0x0f;
    switch (op) {
      case 0x00: // DONE
        if (!lazy) return binds;
        break;
      case 0x10: // SET_DYLIB_ORDINAL_IMM
        ordinal = imm;
        break;
      case 0x20: // SET_DYLIB_ORDINAL_ULEB
        ordinal = uleb(o, pos);
        break;
      case 0x30: // SET_DYLIB_SPECIAL_IMM: 0 self, -1 main executable, -2 flat lookup, -3 weak lookup
        ordinal = imm ? (0xf0 | imm) - 0x100 : 0;
        break;
      case 0x40: // SET_SYMBOL_TRAILING_FLAGS_IMM
        name = cstring(o, pos.p);
        pos.p += name.length + 1;
        break;
      case 0x50: // SET_TYPE_IMM
        break;
      case 0x60: // SET_ADDEND_SLEB
        sleb(o, pos);
        break;
      case 0x70: // SET_SEGMENT_AND_OFFSET_ULEB
      case 0x80: // ADD_ADDR_ULEB
        uleb(o, pos);
        break;
      case 0x90: // DO_BIND
      case 0xb0: // DO_BIND_ADD_ADDR_IMM_SCALED
        bind();
        break;
      case 0xa0: // DO_BIND_ADD_ADDR_ULEB
        uleb(o, pos);
        bind();
        break;
      case 0xc0: // DO_BIND_ULEB_TIMES_SKIPPING_ULEB
        uleb(o, pos);
        uleb(o, pos);
        bind();
        break;
      case 0xd0: // THREADED: SET_BIND_ORDINAL_TABLE_SIZE_ULEB (0) or APPLY (1)
        if (imm === 0) uleb(o, pos);
        break;
      default:
        throw new Error(`unknown bind opcode ${hex(byte)} at ${pos.p - 1}`);
    }
  }
  return binds;
}

/** { name, ordinal } of each import of LC_DYLD_CHAINED_FIXUPS (uncompressed symbol names). */
function readChainedImports(c) {
  if (c.length < 28) throw new Error("chained fixups header truncated");
  const importsOff = c.readUInt32LE(8);
  const symbolsOff = c.readUInt32LE(12);
  const count = c.readUInt32LE(16);
  const format = c.readUInt32LE(20);
  if (c.readUInt32LE(24) !== 0) throw new Error("compressed chained-fixup symbol names");
  const stride = { 1: 4, 2: 8, 3: 16 }[format];
  if (!stride) throw new Error(`chained imports format ${format}`);
  range(c, importsOff, count * stride, "chained imports");
  const imports = [];
  for (let i = 0; i < count; i++) {
    const at = importsOff + i * stride;
    let ordinal;
    let nameOff;
    if (format === 3) {
      const v = c.readBigUInt64LE(at);
      ordinal = Number(v & 0xffffn);
      nameOff = Number(v >> 32n);
      if (ordinal >= 0xfff0) ordinal -= 0x10000; // special ordinals, 16 bits
    } else {
      const v = c.readUInt32LE(at);
      ordinal = v & 0xff;
      nameOff = v >>> 9;
      if (ordinal >= 0xf0) ordinal -= 0x100; // special ordinals, 8 bits
    }
    imports.push({ name: cstring(c, symbolsOff + nameOff), ordinal });
  }
  return imports;
}

/** The embedded signature's CodeDirectory (big-endian blobs), every code page hash recomputed. */
function verifySignature(buf, sig) {
  range(buf, sig.dataoff, sig.datasize, "code signature");
  const s = buf.subarray(sig.dataoff, sig.dataoff + sig.datasize);
  if (s.length < 12 || s.readUInt32BE(0) !== 0xfade0cc0) throw new Error("no embedded-signature SuperBlob");
  const count = s.readUInt32BE(8);
  range(s, 12, count * 8, "SuperBlob index");
  let cd;
  let cms = false;
  for (let i = 0; i < count; i++) {
    const type = s.readUInt32BE(12 + i * 8);
    const at = s.readUInt32BE(16 + i * 8);
    range(s, at, 8, `blob ${type}`);
    if (type === 0 && s.readUInt32BE(at) === 0xfade0c02) cd = at;
    // A CMS blob with content is a real (certificate) signature; ad-hoc ones carry none or an empty one.
    if (type === 0x10000 && s.readUInt32BE(at + 4) > 8) cms = true;
  }
  if (cd === undefined) throw new Error("no CodeDirectory in slot 0");
  const u32 = (at) => s.readUInt32BE(cd + at);
  range(s, cd, u32(4), "CodeDirectory");
  const flags = u32(12);
  const hashOffset = u32(16);
  const nCodeSlots = u32(28);
  let codeLimit = u32(32);
  const hashSize = s[cd + 36];
  const hashType = s[cd + 37];
  const pageSize = 2 ** s[cd + 39];
  if (u32(8) >= 0x20300 && s.readBigUInt64BE(cd + 56) !== 0n) codeLimit = Number(s.readBigUInt64BE(cd + 56));
  const hashName = { 1: "sha1", 2: "sha256", 3: "sha256", 4: "sha384" }[hashType];
  if (!hashName) throw new Error(`hash type ${hashType}`);
  if (nCodeSlots !== Math.ceil(codeLimit / pageSize))
    throw new Error(`${nCodeSlots} code slots for ${codeLimit} bytes`);
  range(s, cd + hashOffset, nCodeSlots * hashSize, "code hashes");
  range(buf, 0, codeLimit, "signed code");
  const badPages = [];
  for (let i = 0; i < nCodeSlots; i++) {
    const page = buf.subarray(i * pageSize, Math.min((i + 1) * pageSize, codeLimit));
    const want = s.subarray(cd + hashOffset + i * hashSize, cd + hashOffset + (i + 1) * hashSize);
    const got = createHash(hashName).update(page).digest().subarray(0, hashSize);
    if (!got.equals(want)) badPages.push(i);
  }
  return {
    flags,
    adhoc: (flags & 0x2) !== 0, // CS_ADHOC
    linkerSigned: (flags & 0x20000) !== 0, // CS_LINKER_SIGNED
    cms,
    ident: cstring(s, cd + u32(20)),
    codeLimit,
    nCodeSlots,
    pageSize,
    hashName,
    badPages,
  };
}
