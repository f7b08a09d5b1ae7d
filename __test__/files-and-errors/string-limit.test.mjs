// Texts past V8's longest string (2^29 - 24 units) cannot be made at test time cheaply:
// the real-size case is measured by hand (a 537 M-character line: the reference's open and
// loadEntriesFromFile throw `RangeError: Invalid string length`). Here, the mapping of
// napi-rs's string failure onto that error.
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const { toJsError } = require("../../lib/native.js");

describe("a string V8 cannot hold", () => {
  for (const message of ["Failed to convert rust `String` into napi `string`", "failed to create a string"]) {
    it(`napi's "${message}" becomes the reference's RangeError`, () => {
      const e = toJsError(new Error(message));
      expect(e).toBeInstanceOf(RangeError);
      expect(e.message).toBe("Invalid string length");
    });
  }
  it("leaves other errors alone", () => {
    const e = toJsError(new Error("something else"));
    expect(e).not.toBeInstanceOf(RangeError);
    expect(e.message).toBe("something else");
  });
});
