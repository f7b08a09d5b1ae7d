"use strict";
// The class's context over the core: the projection from the core's context plan, the
// reference's TypeError where the core found a message entry without a message, and
// `appendContextEdit`'s checks of a replacement.

const { projection } = require("./free-functions.js");

/** `appendContextEdit`'s first check, on the replacement alone. */
function assertEditReplacement(replacement) {
  if (
    replacement !== null &&
    (typeof replacement !== "object" ||
      !("content" in replacement) ||
      (typeof replacement.content !== "string" && !Array.isArray(replacement.content)))
  ) {
    throw new Error("Context edit replacement must be null or contain string/array content");
  }
}

/**
 * The replacement a context edit of `target` stores: string content becomes a text block for
 * the roles whose content is an array (as `projectContextEntry` reads it). Throws for a target
 * that contributes no editable model content.
 */
function editReplacementFor(target, targetId, replacement) {
  const editable =
    target.type === "custom_message" ||
    (target.type === "message" &&
      (target.message.role === "user" || target.message.role === "assistant" || target.message.role === "toolResult"));
  if (!editable) throw new Error(`Entry ${targetId} does not contribute editable model content`);
  const targetRole = target.type === "message" ? target.message.role : "custom";
  return replacement !== null &&
    (targetRole === "assistant" || targetRole === "toolResult") &&
    typeof replacement.content === "string"
    ? { content: [{ type: "text", text: replacement.content }] }
    : replacement;
}

/**
 * Throws the TypeError the reference throws where the core found a message entry without a
 * message (`MessageMissing` in tree.rs): the same property read, so the engine words it. Its
 * text may quote the expression (JavaScriptCore's does), so the variable is named as in the
 * reference: `entry` in the context functions, `e` in `_hasConversation` (the next function).
 */
function throwMessageMissing(entry) {
  void entry.message.role;
  throw new Error("pi-session-native internal error: the core reported a missing message that is there");
}

function throwMessageMissingInHasConversation(e) {
  void e.message.role;
  throw new Error("pi-session-native internal error: the core reported a missing message that is there");
}

/** The positions of the context entries in the core's context plan (`tree::context_plan`). */
function planPositions(plan) {
  const positions = [];
  for (let i = 2; i < plan.length; i += 3) positions.push(plan[i]);
  return positions;
}

/**
 * The class's projection from the core's context plan `[thinking, model, (position, edit,
 * noMessages)…]`: the core chose the entries, this builds their messages from the objects
 * (`at(position)`, `atMany(positions)`).
 */
function projectPlan(plan, entries) {
  let thinkingLevel = "off";
  if (plan[0] >= 0) thinkingLevel = entries.at(plan[0]).thinkingLevel;
  let model = null;
  if (plan[1] >= 0) {
    const e = entries.at(plan[1]);
    model =
      e.type === "model_change"
        ? { provider: e.provider, modelId: e.modelId }
        : { provider: e.message.provider, modelId: e.message.model };
  }
  const sources = entries.atMany(planPositions(plan));
  return projection(
    sources,
    (k) => plan[4 + 3 * k] === 1,
    (k) => (plan[3 + 3 * k] >= 0 ? entries.at(plan[3 + 3 * k]) : undefined),
    thinkingLevel,
    model,
  );
}

module.exports = {
  assertEditReplacement,
  editReplacementFor,
  projectPlan,
  throwMessageMissing,
  throwMessageMissingInHasConversation,
};
