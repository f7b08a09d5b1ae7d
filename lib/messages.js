"use strict";
// Message constructors of pi 1.6.0 (`core/messages.js`) and pi-ai's system-message replay
// (`utils/transcript.js`, `utils/text.js`). Key order and value handling are the reference's.

function createBranchSummaryMessage(summary, fromId, timestamp) {
  return { role: "branchSummary", summary, fromId, timestamp: new Date(timestamp).getTime() };
}

function createCompactionSummaryMessage(summary, tokensBefore, timestamp) {
  return { role: "compactionSummary", summary: summary, tokensBefore, timestamp: new Date(timestamp).getTime() };
}

function createCustomMessage(customType, content, display, details, timestamp) {
  return { role: "custom", customType, content, display, details, timestamp: new Date(timestamp).getTime() };
}

function contentText(content, separator = "\n") {
  if (typeof content === "string") return content;
  return content
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join(separator);
}

function isSystemMessage(message) {
  return message.role === "system";
}

function getCurrentTools(messages) {
  const tools = new Map();
  for (const message of messages) {
    if (!isSystemMessage(message)) continue;
    for (const tool of message.toolsRemoved ?? []) tools.delete(tool.name);
    for (const tool of message.toolsAdded ?? []) tools.set(tool.name, tool);
  }
  return [...tools.values()];
}

/** pi-ai `getCurrentSystemMessage`: every system message replayed into one. */
function getCurrentSystemMessage(messages) {
  const content = [];
  const sections = new Map();
  let timestamp;
  for (const message of messages) {
    if (!isSystemMessage(message)) continue;
    timestamp ??= message.timestamp;
    const text = contentText(message.content);
    if (text.length > 0) content.push(text);
    for (const [name, value] of Object.entries(message.sections ?? {})) {
      if (value === null) sections.delete(name);
      else sections.set(name, value);
    }
  }
  const tools = getCurrentTools(messages);
  if (timestamp === undefined && tools.length === 0) return undefined;
  return {
    role: "system",
    content: content.join("\n\n"),
    ...(sections.size > 0 ? { sections: Object.fromEntries(sections) } : {}),
    ...(tools.length > 0 ? { toolsAdded: tools } : {}),
    timestamp: timestamp ?? 0,
  };
}

module.exports = {
  contentText,
  createBranchSummaryMessage,
  createCompactionSummaryMessage,
  createCustomMessage,
  getCurrentSystemMessage,
};
