// Message builders for the generator: pi 1.6.0's tools, models, thinking levels, custom entry
// types, the system prompt and per-message usage, in the shapes pi writes them.

import { KB, proseOf } from "./text.mjs";

// ---------------------------------------------------------------------------
// Message builders (shapes as pi 1.6.0 writes them)
// ---------------------------------------------------------------------------

export const TOOLS = [
  {
    name: "read",
    description:
      "Read the contents of a file. Supports text files and images (jpg, png, gif, webp). Images are sent as attachments. For text files, output is truncated to 2000 lines or 50KB (whichever is hit first). Use offset/limit for large files.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "Path to the file to read (relative or absolute)" },
        offset: { type: "number", description: "Line number to start reading from (1-indexed)" },
        limit: { type: "number", description: "Maximum number of lines to read" },
      },
      required: ["path"],
      additionalProperties: false,
    },
  },
  {
    name: "bash",
    description:
      "Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds.",
    parameters: {
      type: "object",
      properties: {
        command: { type: "string", description: "Bash command to execute" },
        timeout: { type: "number", description: "Timeout in seconds (optional, no default timeout)" },
      },
      required: ["command"],
      additionalProperties: false,
    },
  },
  {
    name: "edit",
    description:
      "Edit a file by replacing exact text. The oldText must match exactly (including whitespace). Use this for precise, surgical edits.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "Path to the file to edit (relative or absolute)" },
        oldText: { type: "string", description: "Exact text to find and replace (must match exactly)" },
        newText: { type: "string", description: "New text to replace the old text with" },
      },
      required: ["path", "oldText", "newText"],
      additionalProperties: false,
    },
  },
  {
    name: "write",
    description:
      "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "Path to the file to write (relative or absolute)" },
        content: { type: "string", description: "Content to write to the file" },
      },
      required: ["path", "content"],
      additionalProperties: false,
    },
  },
  {
    name: "grep",
    description:
      "Search file contents for a regex pattern. Returns matching lines with file paths and line numbers. Respects .gitignore.",
    parameters: {
      type: "object",
      properties: {
        pattern: { type: "string", description: "Search pattern (regex or literal string)" },
        path: { type: "string", description: "Directory or file to search (default: current directory)" },
        glob: { type: "string", description: "Filter files by glob pattern, e.g. '*.ts'" },
        ignoreCase: { type: "boolean", description: "Case-insensitive search (default: false)" },
      },
      required: ["pattern"],
      additionalProperties: false,
    },
  },
  {
    name: "find",
    description:
      "Search for files by glob pattern. Returns matching file paths relative to the search directory. Respects .gitignore.",
    parameters: {
      type: "object",
      properties: {
        pattern: { type: "string", description: "Glob pattern to match files, e.g. '*.ts', '**/*.json'" },
        path: { type: "string", description: "Directory to search in (default: current directory)" },
      },
      required: ["pattern"],
      additionalProperties: false,
    },
  },
  {
    name: "ls",
    description:
      "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. Includes dotfiles.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "Directory to list (default: current directory)" },
        limit: { type: "number", description: "Maximum number of entries to return (default: 500)" },
      },
      additionalProperties: false,
    },
  },
];
const TOOL_WEIGHTS = [
  ["read", 34],
  ["bash", 30],
  ["edit", 18],
  ["grep", 7],
  ["write", 5],
  ["find", 3],
  ["ls", 3],
];
const TOOL_TOTAL = TOOL_WEIGHTS.reduce((a, [, w]) => a + w, 0);

export const MODELS = [
  { api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", price: [3, 15, 0.3, 3.75] },
  { api: "anthropic-messages", provider: "anthropic", model: "claude-opus-4-5", price: [5, 25, 0.5, 6.25] },
  { api: "openai-responses", provider: "openai", model: "gpt-5.1-codex", price: [1.25, 10, 0.125, 0] },
  { api: "google-generative-ai", provider: "google", model: "gemini-3-pro-preview", price: [2, 12, 0.2, 0] },
];
export const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"];
export const CUSTOM_TYPES = ["todo-state", "plan-mode", "git-checkpoint", "permission-gate", "subagent-run"];

export function pickTool(rng) {
  let r = rng.next() * TOOL_TOTAL;
  for (const [name, w] of TOOL_WEIGHTS) {
    r -= w;
    if (r < 0) return name;
  }
  return "read";
}

export function systemPrompt(rng, cwd) {
  return [
    "You are an expert coding assistant operating inside pi, a coding agent harness. You help users by reading files, executing commands, editing code, and writing new files.",
    "",
    "Available tools:",
    ...TOOLS.map((t) => `- ${t.name}: ${t.description.split(".")[0]}`),
    "",
    "Guidelines:",
    proseOf(rng, rng.int(4 * KB, 9 * KB)),
    "",
    `Current date and time: ${new Date(1767225600000).toUTCString()}`,
    `Current working directory: ${cwd}`,
  ].join("\n");
}

export function usageFor(rng, model, inputTokens, outputTokens) {
  const cacheRead = Math.max(0, Math.floor(inputTokens * (0.7 + 0.25 * rng.next())));
  const cacheWrite = Math.floor((inputTokens - cacheRead) * rng.next());
  const input = Math.max(1, inputTokens - cacheRead - cacheWrite);
  const [pi, po, pr, pw] = model.price;
  const cost = {
    input: (input * pi) / 1e6,
    output: (outputTokens * po) / 1e6,
    cacheRead: (cacheRead * pr) / 1e6,
    cacheWrite: (cacheWrite * pw) / 1e6,
    total: 0,
  };
  cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
  return {
    input,
    output: outputTokens,
    cacheRead,
    cacheWrite,
    totalTokens: input + outputTokens + cacheRead + cacheWrite,
    cost,
  };
}
