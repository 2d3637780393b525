// Preloaded (`node -r`) before the WebAssembly Lean from npm.
//
// Lean's work runs in emscripten pthread workers. Node gives each worker a small stack,
// and kernel computation (`decide`, `decide +kernel`) recurses deeply, so without this the
// process dies with "Maximum call stack size exceeded" (measured, see docs/toolchain.md).
// We give every worker a 512 MiB stack; the main thread gets `--stack-size` on the node
// command line instead.
"use strict";

const workerThreads = require("worker_threads");
const BaseWorker = workerThreads.Worker;
const STACK_MB = 512;

workerThreads.Worker = class LeanWorker extends BaseWorker {
  constructor(filename, options = {}) {
    const resourceLimits = { ...(options.resourceLimits || {}), stackSizeMb: STACK_MB };
    super(filename, { ...options, resourceLimits });
  }
};
