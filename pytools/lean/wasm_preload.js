// Preloaded (`node -r`) before the WebAssembly Lean from npm, in the main thread and, because
// workers inherit node's `-r`, in every emscripten pthread worker too. It does two things.
//
// 1. A bigger worker stack. Lean's work runs in pthread workers; node gives each a small
//    stack, and kernel computation (`decide +kernel`) recurses deeply, so without this the
//    process dies with "Maximum call stack size exceeded" (measured, docs/toolchain.md).
//    Every worker gets a 512 MiB stack; the main thread gets `--stack-size` from the caller.
//
// 2. Two load-time rewrites of lean.js's emscripten glue (the file on disk is untouched):
//    - symbol lookup: `__dlsym_js` runs `Object.keys(lib.exports).indexOf(symbol)`, building
//      and scanning a 201,110-name array on each of the ~2,400 lookups an `import Init`
//      makes (~50 ms each: most of the ~2.5 minutes a module cost). The rewrite answers the
//      same question from a name -> index map built once per thread (`symbolIndex` below).
//    - pthread pool: 4 workers are pre-spawned, each recompiling the 89 MB lean.js; 1 is
//      enough (Lean spawns the others it needs on demand).
//    Each rewrite is applied only if its exact text occurs exactly once in lean.js; if not,
//    the process stops with exit code 97 naming what changed. It never runs half-patched.
//
// PYTOOLS_WASM_PATCH selects the mode: unset or "on" (the rewrites), "verify" (the rewrites,
// and every lookup also runs the original scan: the original's answer is returned, and any
// disagreement stops the process: the check behind docs/toolchain.md's "same verdicts"),
// "off" (no rewrite: the package as shipped, for measurements only). When
// PYTOOLS_WASM_PATCH_REPORT names a file, every thread appends one JSON line saying what it
// applied, so a caller can refuse a compile that ran without the rewrites.
"use strict";

const fs = require("fs");
const path = require("path");
const Module = require("module");
const workerThreads = require("worker_threads");

// PYTOOLS_WASM_STACK_MB (measurements only, e.g. the smallest stack a module compiles with,
// docs/toolchain.md): another worker stack size in MiB; anything but a positive integer stops.
const STACK_MB = stackSize(process.env.PYTOOLS_WASM_STACK_MB);
const FAILED = 97;
const MODE = process.env.PYTOOLS_WASM_PATCH || "on";
const REPORT = process.env.PYTOOLS_WASM_PATCH_REPORT || "";

// --- 1. the worker stack -------------------------------------------------------------------

function stackSize(text) {
  if (text === undefined || text === "") return 512;
  if (!/^[1-9][0-9]{0,5}$/.test(text)) {
    process.stderr.write(`pytools wasm preload: PYTOOLS_WASM_STACK_MB=${text}: not a positive integer\n`);
    process.exit(97);
  }
  return Number(text);
}

const BaseWorker = workerThreads.Worker;
workerThreads.Worker = class LeanWorker extends BaseWorker {
  constructor(filename, options = {}) {
    const resourceLimits = { ...(options.resourceLimits || {}), stackSizeMb: STACK_MB };
    super(filename, { ...options, resourceLimits });
  }
};

// --- 2. the rewrites -----------------------------------------------------------------------

const REWRITES = [
  {
    name: "dlsym-index-map",
    from: "newSymIndex=Object.keys(lib.exports).indexOf(symbol);",
    to: "newSymIndex=globalThis.__pytoolsSymbolIndex(lib.exports,symbol);",
  },
  {
    name: "pthread-pool-1",
    from: "var pthreadPoolSize=4;",
    to: "var pthreadPoolSize=1;",
  },
];
// The map gives the index Object.keys would give only while keys are appended, never
// deleted (indices of earlier keys stay put). lean.js deletes none; refuse a lean.js that does.
const FORBIDDEN = ["delete wasmImports"];

function fail(message) {
  process.stderr.write(`pytools wasm preload: ${message}\n`);
  process.exit(FAILED);
}

function occurrences(text, needle) {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) count++;
  return count;
}

/** The rewritten source, or a stop naming the rewrite whose text is absent or repeated. */
function rewrite(source, filename) {
  for (const word of FORBIDDEN) {
    if (source.includes(word)) fail(`${filename}: contains \`${word}\`; the symbol map would be wrong`);
  }
  const counts = REWRITES.map((r) => occurrences(source, r.from));
  const bad = REWRITES.filter((_, i) => counts[i] !== 1);
  if (bad.length) {
    const what = bad.map((r) => `${r.name}: \`${r.from}\` occurs ${counts[REWRITES.indexOf(r)]} times`);
    fail(`${filename}: not the lean.js these rewrites were written for (${what.join("; ")}); ` +
         "set PYTOOLS_WASM_PATCH=off to run it unpatched (slow)");
  }
  return REWRITES.reduce((text, r) => text.replace(r.from, () => r.to), source);
}

// One map per exports object and thread. A symbol missing from the map but present on the
// object was added after the map was built: rebuild, then answer.
const maps = new WeakMap();
function indexMap(exports) {
  const map = new Map();
  Object.keys(exports).forEach((key, i) => map.set(key, i));
  maps.set(exports, map);
  return map;
}
function symbolIndex(exports, symbol) {
  let map = maps.get(exports) || indexMap(exports);
  let index = map.get(symbol);
  if (index === undefined && Object.prototype.hasOwnProperty.call(exports, symbol)) {
    map = indexMap(exports);
    index = map.get(symbol);
  }
  return index === undefined ? -1 : index;
}
function verifiedSymbolIndex(exports, symbol) {
  const expected = Object.keys(exports).indexOf(symbol);
  const got = symbolIndex(exports, symbol);
  if (got !== expected) fail(`symbol map disagrees on ${JSON.stringify(symbol)}: ${got} != ${expected}`);
  return expected;
}

function report(applied) {
  if (!REPORT) return;
  const line = JSON.stringify({
    thread: workerThreads.isMainThread ? "main" : "worker",
    mode: MODE,
    applied,
  });
  fs.appendFileSync(REPORT, line + "\n");
}

if (!["on", "verify", "off"].includes(MODE)) {
  fail(`PYTOOLS_WASM_PATCH=${MODE}: expected on, verify or off`);
}
if (MODE !== "off") {
  globalThis.__pytoolsSymbolIndex = MODE === "verify" ? verifiedSymbolIndex : symbolIndex;
  const compile = Module.prototype._compile;
  Module.prototype._compile = function (content, filename, ...rest) {
    if (path.basename(filename) === "lean.js") {
      content = rewrite(content, filename);
      report(REWRITES.map((r) => r.name));
    }
    return compile.call(this, content, filename, ...rest);
  };
} else {
  report([]);
}
