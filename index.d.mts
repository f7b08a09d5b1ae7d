// Types of the ESM entry (index.mjs), which re-exports the CommonJS entry: the same declarations as
// index.d.ts (the one source of them), plus the default export index.mjs has (the CommonJS exports object).
import * as cjs from "./index.js";

export * from "./index.js";
export default cjs;
