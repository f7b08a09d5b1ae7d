//! The model messages of context entries, as JSON text: `sessionEntryToContextMessages`
//! (with the seed format's `retainedTail`) and `projectContextEntry` (a context edit's
//! replacement) of pi 1.6.0, for the entries and edits `Tree::context_plan` picks.
//!
//! Values pi passes through are copied from the entry's line as they are written there;
//! objects pi rebuilds (`{...message, content}`) keep each key at its first place with its
//! last value, as `JSON.parse` and a spread do.

use crate::model::entry::EntryType;
use crate::storage::json::{self, Kind, Value};

/// One context message and the role `projectContextEntry` tests (`None`: not a string).
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub json: String,
    pub role: Option<String>,
}

/// A parsed JSON text and the members of its top-level object (last duplicate wins).
struct Obj<'a> {
    src: &'a [u8],
    v: Value,
}

impl<'a> Obj<'a> {
    fn parse(src: &'a [u8]) -> Option<Obj<'a>> {
        json::parse_document(src).map(|v| Obj { src, v })
    }

    fn at(&self, v: Value) -> Obj<'a> {
        Obj { src: self.src, v }
    }

    fn get(&self, key: &str) -> Option<Obj<'a>> {
        let mut out = None;
        if self.v.kind == Kind::Object {
            json::for_each_member(self.src, self.v, |k, v| {
                if key_is(k, key) {
                    out = Some(v);
                }
            });
        }
        out.map(|v| self.at(v))
    }

    fn raw(&self) -> &'a str {
        std::str::from_utf8(self.v.text(self.src)).unwrap_or("null")
    }

    fn kind(&self) -> Kind {
        self.v.kind
    }

    fn str(&self) -> Option<String> {
        (self.v.kind == Kind::String).then(|| {
            let raw = self.v.text(self.src);
            json::decode_string(&raw[1..raw.len() - 1]).unwrap_or_else(|units| String::from_utf16_lossy(&units))
        })
    }

    fn truthy(&self) -> bool {
        self.v.truthy(self.src)
    }
}

fn key_is(raw: &[u8], key: &str) -> bool {
    if raw.contains(&b'\\') { json::decode_string(raw).ok().as_deref() == Some(key) } else { raw == key.as_bytes() }
}

/// An object written member by member from JSON texts.
#[derive(Default)]
struct Builder(Vec<(String, String)>);

impl Builder {
    /// Sets (`Some`) or removes (`None`: undefined) a member; a key set again keeps its place.
    fn set(&mut self, key: &str, value: Option<&str>) -> &mut Builder {
        let at = self.0.iter().position(|(k, _)| k == key);
        match (at, value) {
            (Some(i), Some(v)) => self.0[i].1 = v.to_string(),
            (Some(i), None) => {
                self.0.remove(i);
            }
            (None, Some(v)) => self.0.push((key.to_string(), v.to_string())),
            (None, None) => {}
        }
        self
    }

    /// `{...obj}`: the members of a parsed object, keys decoded.
    fn spread(obj: &Obj<'_>) -> Builder {
        let mut b = Builder::default();
        json::for_each_member(obj.src, obj.v, |k, v| {
            let key = json::decode_string(k).unwrap_or_else(|units| String::from_utf16_lossy(&units));
            let text = std::str::from_utf8(v.text(obj.src)).unwrap_or("null");
            b.set(&key, Some(text));
        });
        b
    }

    fn text(&self) -> String {
        let mut out = String::from("{");
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            json::stringify_utf16(&k.encode_utf16().collect::<Vec<u16>>(), &mut out);
            out.push(':');
            out.push_str(v);
        }
        out.push('}');
        out
    }
}

/// A number as `JSON.stringify` writes it (`null` for NaN and infinities).
fn number(v: f64) -> String {
    if v.is_finite() { ryu_js::Buffer::new().format_finite(v).to_owned() } else { "null".into() }
}

fn message(json: String, role: &str) -> Message {
    Message { json, role: Some(role.to_string()) }
}

/// `sessionEntryToContextMessages(entry)` for an entry of type `ty` written as `line`.
/// `time` is `new Date(entry.timestamp).getTime()` (the synthesised messages' timestamp);
/// `hook_is_custom`: the file predates v3, where pi renames the role `hookMessage` to `custom`.
pub fn entry_messages(ty: EntryType, line: &[u8], time: f64, hook_is_custom: bool) -> Vec<Message> {
    let Some(e) = Obj::parse(line) else { return Vec::new() };
    let mut out = Vec::new();
    match ty {
        EntryType::Message => {
            let Some(m) = e.get("message") else { return out };
            let mut role = m.get("role").and_then(|r| r.str());
            let content_null = m.get("content").is_none_or(|c| c.kind() == Kind::Null);
            let is_obj = m.kind() == Kind::Object;
            let mut text = match role.as_deref() {
                Some("system") if content_null && is_obj => Builder::spread(&m).set("content", Some("\"\"")).text(),
                Some("user" | "assistant" | "toolResult") if content_null && is_obj => {
                    Builder::spread(&m).set("content", Some("[]")).text()
                }
                _ => m.raw().to_string(),
            };
            if hook_is_custom && role.as_deref() == Some("hookMessage") {
                let migrated = Obj::parse(text.as_bytes()).expect("a message object");
                text = Builder::spread(&migrated).set("role", Some("\"custom\"")).text();
                role = Some("custom".into());
            }
            out.push(Message { json: text, role });
        }
        EntryType::CustomMessage => {
            let [ct, content, display, details] = ["customType", "content", "display", "details"].map(|k| e.get(k));
            let mut b = Builder::default();
            b.set("role", Some("\"custom\"")).set("customType", ct.as_ref().map(Obj::raw));
            b.set("content", Some(content.filter(|c| c.kind() != Kind::Null).map_or("[]", |c| c.raw())));
            b.set("display", display.as_ref().map(Obj::raw)).set("details", details.as_ref().map(Obj::raw));
            out.push(message(b.set("timestamp", Some(&number(time))).text(), "custom"));
        }
        EntryType::BranchSummary => {
            if let Some(summary) = e.get("summary").filter(Obj::truthy) {
                let mut b = Builder::default();
                b.set("role", Some("\"branchSummary\"")).set("summary", Some(summary.raw()));
                b.set("fromId", e.get("fromId").as_ref().map(Obj::raw));
                out.push(message(b.set("timestamp", Some(&number(time))).text(), "branchSummary"));
            }
        }
        EntryType::Compaction => {
            if let Some(sys) = e.get("systemMessage").filter(Obj::truthy) {
                out.push(Message { json: sys.raw().to_string(), role: sys.get("role").and_then(|r| r.str()) });
            }
            let mut b = Builder::default();
            b.set("role", Some("\"compactionSummary\"")).set("summary", e.get("summary").as_ref().map(Obj::raw));
            b.set("tokensBefore", e.get("tokensBefore").as_ref().map(Obj::raw));
            out.push(message(b.set("timestamp", Some(&number(time))).text(), "compactionSummary"));
            if let Some(tail) = e.get("retainedTail").filter(|t| t.kind() == Kind::Array) {
                json::for_each_element(tail.src, tail.v, |v| {
                    let m = tail.at(v);
                    out.push(Message { json: m.raw().to_string(), role: m.get("role").and_then(|r| r.str()) });
                });
            }
        }
        _ => {}
    }
    out
}

/// `projectContextEntry(entry, edit)`: the messages of one entry after the context edit
/// written as `edit_line`. `replacement: null` drops them; otherwise user, assistant,
/// toolResult and custom messages take the replacement's `content` (a string becomes one
/// text block for assistant and toolResult messages).
pub fn apply_edit(messages: Vec<Message>, edit_line: &[u8]) -> Vec<Message> {
    let Some(rep) = Obj::parse(edit_line).and_then(|e| e.get("replacement")) else { return messages };
    if rep.kind() == Kind::Null {
        return Vec::new();
    }
    let content = rep.get("content");
    messages
        .into_iter()
        .map(|m| {
            let role = m.role.as_deref();
            if !matches!(role, Some("user" | "assistant" | "toolResult" | "custom")) {
                return m;
            }
            let as_blocks = matches!(role, Some("assistant" | "toolResult"))
                && content.as_ref().is_some_and(|c| c.kind() == Kind::String);
            let value = match &content {
                Some(c) if as_blocks => Some(format!("[{{\"type\":\"text\",\"text\":{}}}]", c.raw())),
                c => c.as_ref().map(|c| c.raw().to_string()),
            };
            let json = match Obj::parse(m.json.as_bytes()).filter(|o| o.kind() == Kind::Object) {
                Some(obj) => Builder::spread(&obj).set("content", value.as_deref()).text(),
                None => return m,
            };
            Message { json, role: m.role }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jsons(ms: &[Message]) -> Vec<&str> {
        ms.iter().map(|m| m.json.as_str()).collect()
    }

    #[test]
    fn messages_pass_through_and_null_content_is_filled() {
        let line = br#"{"type":"message","message":{"role":"user","content":"hi \ud800","n":1.50}}"#;
        let ms = entry_messages(EntryType::Message, line, 0.0, false);
        assert_eq!(jsons(&ms), [r#"{"role":"user","content":"hi \ud800","n":1.50}"#], "as written");
        let null = br#"{"type":"message","message":{"content":null,"role":"system","content":null,"x":1}}"#;
        let ms = entry_messages(EntryType::Message, null, 0.0, false);
        assert_eq!(jsons(&ms), [r#"{"content":"","role":"system","x":1}"#], "first place, last value");
        assert!(entry_messages(EntryType::Message, br#"{"type":"message"}"#, 0.0, false).is_empty());
    }

    #[test]
    fn hook_messages_become_custom_before_v3() {
        let line = br#"{"type":"message","message":{"role":"hookMessage","content":"h"}}"#;
        let ms = entry_messages(EntryType::Message, line, 0.0, true);
        assert_eq!(ms, [message(r#"{"role":"custom","content":"h"}"#.into(), "custom")]);
        let kept = entry_messages(EntryType::Message, line, 0.0, false);
        assert_eq!(kept[0].role.as_deref(), Some("hookMessage"));
    }

    #[test]
    fn synthesised_messages() {
        let cm = br#"{"type":"custom_message","customType":"note","content":null,"display":true}"#;
        assert_eq!(
            jsons(&entry_messages(EntryType::CustomMessage, cm, 5.0, false)),
            [r#"{"role":"custom","customType":"note","content":[],"display":true,"timestamp":5}"#]
        );
        let bs = br#"{"type":"branch_summary","summary":"S","fromId":"a"}"#;
        assert_eq!(
            jsons(&entry_messages(EntryType::BranchSummary, bs, f64::NAN, false)),
            [r#"{"role":"branchSummary","summary":"S","fromId":"a","timestamp":null}"#]
        );
        let empty = br#"{"type":"branch_summary","summary":""}"#;
        assert!(entry_messages(EntryType::BranchSummary, empty, 0.0, false).is_empty());
        let c = br#"{"type":"compaction","summary":"S","tokensBefore":9,"systemMessage":{"role":"system","content":"sys"},"retainedTail":[{"role":"user","content":"kept"}]}"#;
        assert_eq!(
            jsons(&entry_messages(EntryType::Compaction, c, 1e12, false)),
            [
                r#"{"role":"system","content":"sys"}"#,
                r#"{"role":"compactionSummary","summary":"S","tokensBefore":9,"timestamp":1000000000000}"#,
                r#"{"role":"user","content":"kept"}"#
            ]
        );
    }

    #[test]
    fn context_edits() {
        let msgs = || {
            vec![
                message(r#"{"role":"assistant","content":[],"model":"m"}"#.into(), "assistant"),
                message(r#"{"role":"branchSummary","summary":"S"}"#.into(), "branchSummary"),
            ]
        };
        let text = br#"{"type":"context_edit","replacement":{"content":"edited"}}"#;
        assert_eq!(
            jsons(&apply_edit(msgs(), text)),
            [
                r#"{"role":"assistant","content":[{"type":"text","text":"edited"}],"model":"m"}"#,
                r#"{"role":"branchSummary","summary":"S"}"#
            ]
        );
        let gone = br#"{"type":"context_edit","replacement":{}}"#;
        assert_eq!(jsons(&apply_edit(msgs(), gone))[0], r#"{"role":"assistant","model":"m"}"#, "content undefined");
        assert!(apply_edit(msgs(), br#"{"type":"context_edit","replacement":null}"#).is_empty());
        assert_eq!(apply_edit(msgs(), br#"{"type":"context_edit"}"#), msgs(), "no replacement: unchanged");
    }
}
