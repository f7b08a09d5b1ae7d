// A folder of small sessions for listing tests: session i has header id `s<i>`, one user message
// `hello <i>`, and times one minute apart from 2024-01-01 (so the names sort by i).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export function writePlainSessions(dir, cwd, count) {
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < count; i++) {
    const ts = new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString();
    const header = { type: "session", version: 3, id: `s${i}`, timestamp: ts, cwd };
    const message = {
      type: "message",
      id: `m${i}`,
      parentId: null,
      timestamp: ts,
      message: { role: "user", content: `hello ${i}`, timestamp: Date.parse(ts) },
    };
    writeFileSync(
      join(dir, `${ts.replace(/[:.]/g, "-")}_s${i}.jsonl`),
      `${JSON.stringify(header)}\n${JSON.stringify(message)}\n`,
    );
  }
}

/** Spins for `ms`: a progress callback that takes its time, as pi's picker does. */
export const busy = (ms) => {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
};
