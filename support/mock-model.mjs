// A loopback OpenAI-compatible chat model for pi's CLI tests: streams `chat.completion.chunk`s as SSE on
// 127.0.0.1 (never anything off the machine). Run as a child process:
//
//   node mock-model.mjs <log dir>      prints {"port": N} on stdout once listening
//
// Routes: POST /<label>/v1/chat/completions. Each request body is appended to <log dir>/<label>.jsonl, so
// a test can compare what pi sent the model (its session context) between two runs.
//
// Replies are a pure function of the request, so two runs of the same script get the same answers:
//   - a summarisation request (compaction)            -> "SUMMARY of <n> messages"
//   - last message a tool result                      -> text quoting the result's first line
//   - last user text containing "TOOL:<path>"         -> a `read` tool call on <path>
//   - anything else                                   -> "reply #<n>: <roles> <- <last user text>"
//     where n is the number of messages in the request and roles their first letters (u, a, t, s)
import { appendFileSync, mkdirSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";

const logDir = process.argv[2];
if (logDir) mkdirSync(logDir, { recursive: true });

const textOf = (content) =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((p) => (p.type === "text" ? p.text : `[${p.type}]`)).join("")
      : "";

function script(body) {
  const msgs = (body.messages ?? []).filter((m) => m.role !== "system" && m.role !== "developer");
  const last = msgs[msgs.length - 1];
  const roles = msgs.map((m) => m.role[0]).join("");
  const lastUser = [...msgs].reverse().find((m) => m.role === "user");
  const userText = lastUser ? textOf(lastUser.content) : "";
  if (/summar/i.test(userText) && /<conversation>|conversation|summary/i.test(userText) && !body.tools?.length) {
    return { text: `SUMMARY of ${msgs.length} messages: the user and the assistant talked about files.` };
  }
  if (last?.role === "tool") {
    const first = textOf(last.content).split("\n")[0].slice(0, 80);
    return { text: `The tool said: ${first}` };
  }
  const m = /TOOL:(\S+)/.exec(userText);
  if (m && last?.role === "user") return { tool: { name: "read", args: { path: m[1] } } };
  return { text: `reply #${msgs.length}: ${roles} <- ${userText.split("\n")[0].slice(0, 60)}` };
}

function chunk(id, model, delta, finish = null, usage) {
  const c = {
    id,
    object: "chat.completion.chunk",
    created: 1700000000,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  if (usage) {
    c.choices = [];
    c.usage = usage;
  }
  return `data: ${JSON.stringify(c)}\n\n`;
}

const counters = new Map(); // per label, so two sides get the same response ids
const server = createServer((req, res) => {
  let raw = "";
  req.setEncoding("utf8");
  req.on("data", (d) => (raw += d));
  req.on("end", () => {
    const m = /^\/([\w.-]+)\/v1\/chat\/completions$/.exec(req.url ?? "");
    if (req.method !== "POST" || !m) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `mock model: no route ${req.method} ${req.url}` } }));
      return;
    }
    let body;
    try {
      body = JSON.parse(raw);
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (logDir) appendFileSync(join(logDir, `${m[1]}.jsonl`), `${JSON.stringify(body)}\n`);
    const reply = script(body);
    const n = (counters.get(m[1]) ?? 0) + 1;
    counters.set(m[1], n);
    const id = `chatcmpl-mock${n}`;
    const model = body.model ?? "mock";
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    const out = [chunk(id, model, { role: "assistant", content: "" })];
    if (reply.tool) {
      const args = JSON.stringify(reply.tool.args);
      out.push(
        chunk(id, model, {
          tool_calls: [
            { index: 0, id: "call_mock_1", type: "function", function: { name: reply.tool.name, arguments: "" } },
          ],
        }),
      );
      out.push(chunk(id, model, { tool_calls: [{ index: 0, function: { arguments: args.slice(0, 5) } }] }));
      out.push(chunk(id, model, { tool_calls: [{ index: 0, function: { arguments: args.slice(5) } }] }));
      out.push(chunk(id, model, {}, "tool_calls"));
    } else {
      // the text in a few pieces, as a real model streams it
      const words = reply.text.split(/(?<= )/);
      for (let i = 0; i < words.length; i += 3) out.push(chunk(id, model, { content: words.slice(i, i + 3).join("") }));
      out.push(chunk(id, model, {}, "stop"));
    }
    const prompt = Math.ceil(raw.length / 4);
    out.push(chunk(id, model, {}, null, { prompt_tokens: prompt, completion_tokens: 20, total_tokens: prompt + 20 }));
    out.push("data: [DONE]\n\n");
    res.end(out.join(""));
  });
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
