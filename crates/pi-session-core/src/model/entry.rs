//! The skeleton of a session entry: the few fields the core needs to index,
//! walk and project a session, without holding the entry as a value tree.

use crate::storage::json::{self, Kind, Value};

/// An entry's `type`, as far as the reference compares it (`entry.type === "…"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryType {
    Session,
    Message,
    ThinkingLevelChange,
    ModelChange,
    Compaction,
    BranchSummary,
    Custom,
    CustomMessage,
    ContextEdit,
    Label,
    SessionInfo,
    Usage,
    /// Any other string, or a non-string `type`.
    Other,
}

impl EntryType {
    pub fn from_name(name: &str) -> EntryType {
        match name {
            "session" => EntryType::Session,
            "message" => EntryType::Message,
            "thinking_level_change" => EntryType::ThinkingLevelChange,
            "model_change" => EntryType::ModelChange,
            "compaction" => EntryType::Compaction,
            "branch_summary" => EntryType::BranchSummary,
            "custom" => EntryType::Custom,
            "custom_message" => EntryType::CustomMessage,
            "context_edit" => EntryType::ContextEdit,
            "label" => EntryType::Label,
            "session_info" => EntryType::SessionInfo,
            "usage" => EntryType::Usage,
            _ => EntryType::Other,
        }
    }
}

/// A JS value used as a `Map` key (`SameValueZero`), as ids, parent ids and targets are.
///
/// Primitives compare by value; objects and arrays parsed from JSON are distinct objects,
/// so each gets a key equal to nothing else.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    Undefined,
    Null,
    Bool(bool),
    /// f64 bits, with -0 folded into 0 (SameValueZero).
    Num(u64),
    Str(Box<str>),
    /// A string holding lone surrogates, kept as its `JSON.stringify` text.
    IllStr(Box<str>),
    Unique(u64),
}

impl Key {
    pub fn num(v: f64) -> Key {
        Key::Num(if v == 0.0 {
            0u64
        } else if v.is_nan() {
            f64::NAN.to_bits()
        } else {
            v.to_bits()
        })
    }

    /// ECMAScript truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            Key::Undefined | Key::Null | Key::Bool(false) => false,
            Key::Bool(true) | Key::Unique(_) | Key::IllStr(_) => true,
            Key::Num(bits) => f64::from_bits(*bits) != 0.0 && !f64::from_bits(*bits).is_nan(),
            Key::Str(s) => !s.is_empty(),
        }
    }

    /// Strict equality (`===`) between two values represented by keys (a `Unique` stands
    /// for an object that no other value is; NaN is not `===` to itself).
    pub fn strict_eq(&self, other: &Key) -> bool {
        !matches!(self, Key::Unique(_)) && !self.is_nan() && self == other
    }

    /// NaN: a `Map` finds it as a key, `===` never holds.
    pub fn is_nan(&self) -> bool {
        matches!(self, Key::Num(bits) if f64::from_bits(*bits).is_nan())
    }

    pub fn is_string(&self) -> bool {
        matches!(self, Key::Str(_) | Key::IllStr(_))
    }

    /// Key of a scanned JSON value. `unique` numbers objects and arrays.
    pub fn from_value(src: &[u8], v: Value, unique: &mut u64) -> Key {
        match v.kind {
            Kind::Null => Key::Null,
            Kind::True => Key::Bool(true),
            Kind::False => Key::Bool(false),
            Kind::Number => Key::num(json::number_value(v.text(src))),
            Kind::String => string_key(&src[v.start + 1..v.end - 1]),
            Kind::Array | Kind::Object => {
                *unique += 1;
                Key::Unique(*unique)
            }
        }
    }

    /// Decodes the facade's key encoding: `u`, `l` (null), `t`, `f`, `n<number>`, `s<string>`,
    /// `w<JSON text of an ill-formed string>`, `o` (an object: matches nothing).
    pub fn decode(enc: &str) -> Key {
        let (tag, rest) = enc.split_at(enc.len().min(1));
        match tag {
            "l" => Key::Null,
            "t" => Key::Bool(true),
            "f" => Key::Bool(false),
            "n" => Key::num(rest.parse::<f64>().unwrap_or(f64::NAN)),
            "s" => Key::Str(rest.into()),
            "w" => Key::IllStr(rest.into()),
            "o" => Key::Unique(u64::MAX),
            _ => Key::Undefined,
        }
    }
}

fn string_key(raw: &[u8]) -> Key {
    match json::decode_string(raw) {
        Ok(s) => Key::Str(s.into()),
        Err(units) => {
            let mut out = String::new();
            json::stringify_utf16(&units, &mut out);
            Key::IllStr(out.into())
        }
    }
}

/// What the reference sees at `entry.message` / `entry.message.role`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `message` is null or undefined: reading `.role` throws in the reference.
    NoMessage,
    User,
    Assistant,
    ToolResult,
    System,
    Custom,
    HookMessage,
    /// Any other role value (other string, missing, non-string) on an object message.
    Other,
}

impl Role {
    pub fn from_name(name: &str) -> Role {
        match name {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "toolResult" => Role::ToolResult,
            "system" => Role::System,
            "custom" => Role::Custom,
            "hookMessage" => Role::HookMessage,
            _ => Role::Other,
        }
    }

    /// `_hasConversation()`'s test.
    pub fn is_conversation(self) -> bool {
        matches!(self, Role::User | Role::Assistant)
    }
}

/// The fields of one entry that the core reads.
#[derive(Clone, Debug, PartialEq)]
pub struct Skeleton {
    pub ty: EntryType,
    pub id: Key,
    pub parent: Key,
    /// `targetId` of a label or context edit; `firstKeptEntryId` of a compaction.
    pub target: Key,
    /// Label truthiness (`if (entry.label)`).
    pub label_truthy: bool,
    /// Role of a message entry (`Other` for non-messages).
    pub role: Role,
    /// A compaction carrying a `retainedTail` array.
    pub retained_tail: bool,
    /// `new Date(entry.timestamp).getTime()` when the core can compute it exactly; `None`
    /// when only JS can (non-ISO strings, non-strings).
    pub time: Option<f64>,
}

impl Skeleton {
    /// Validates one line (`JSON.parse` grammar) and reads its skeleton in a single pass.
    /// `None` when the line does not parse or parses to a falsy value (skipped entries).
    pub fn parse_line(src: &[u8], unique: &mut u64) -> Option<Skeleton> {
        let start = json::skip_whitespace(src, 0);
        if src.get(start) != Some(&b'{') {
            let v = json::parse_document(src)?;
            return v.truthy(src).then(|| Skeleton::from_value(src, v, unique));
        }
        let mut members: Vec<(&[u8], Value)> = Vec::with_capacity(8);
        let mut message_role: Option<Option<Value>> = None;
        let end = json::scan_object_members(src, start, |k, at| {
            let is_message =
                k == b"message" || (k.contains(&b'\\') && json::decode_string(k).ok().as_deref() == Some("message"));
            let v = if is_message && src.get(at) == Some(&b'{') {
                let mut role = None;
                let end = json::scan_object_members(src, at, |k2, at2| {
                    let v2 = json::scan_value(src, at2)?;
                    if is_role_key(k2) {
                        role = Some(v2);
                    }
                    Some(v2)
                })?;
                message_role = Some(role);
                Value { kind: Kind::Object, start: at, end }
            } else {
                if is_message {
                    message_role = None;
                }
                json::scan_value(src, at)?
            };
            members.push((k, v));
            Some(v)
        })?;
        if json::skip_whitespace(src, end) != src.len() {
            return None;
        }
        Some(Skeleton::from_members(src, &members, message_role, unique))
    }

    /// Every field undefined: what a value without members gives.
    fn blank() -> Skeleton {
        Skeleton {
            ty: EntryType::Other,
            id: Key::Undefined,
            parent: Key::Undefined,
            target: Key::Undefined,
            label_truthy: false,
            role: Role::Other,
            retained_tail: false,
            time: None,
        }
    }

    /// The skeleton of a parsed top-level value. Non-objects have every field undefined.
    pub fn from_value(src: &[u8], v: Value, unique: &mut u64) -> Skeleton {
        let mut sk = Skeleton::blank();
        if v.kind != Kind::Object {
            // `entry.timestamp` of a primitive or array is undefined: new Date(undefined) is NaN.
            sk.time = Some(f64::NAN);
            return sk;
        }
        let mut members = Vec::new();
        json::for_each_member(src, v, |k, val| members.push((k, val)));
        Skeleton::from_members(src, &members, None, unique)
    }

    /// The skeleton from an object's members (in order; later duplicates win).
    /// `message_role`: the role member of the message object, when already scanned.
    fn from_members(
        src: &[u8],
        members: &[(&[u8], Value)],
        message_role: Option<Option<Value>>,
        unique: &mut u64,
    ) -> Skeleton {
        let mut sk = Skeleton::blank();
        let mut ty = None;
        let mut message = None;
        let mut target = None;
        let mut first_kept = None;
        let mut label = None;
        let mut timestamp = None;
        for &(k, val) in members {
            let decoded;
            let k = if k.contains(&b'\\') {
                decoded = json::decode_string(k).unwrap_or_default();
                decoded.as_bytes()
            } else {
                k
            };
            match k {
                b"type" => ty = Some(val),
                b"id" => sk.id = Key::from_value(src, val, unique),
                b"parentId" => sk.parent = Key::from_value(src, val, unique),
                b"targetId" => target = Some(val),
                b"firstKeptEntryId" => first_kept = Some(val),
                b"label" => label = Some(val),
                b"message" => message = Some(val),
                b"retainedTail" => sk.retained_tail = val.kind == Kind::Array,
                b"timestamp" => timestamp = Some(val),
                _ => {}
            }
        }
        sk.ty = match ty {
            Some(t) if t.kind == Kind::String => match json::decode_string(&src[t.start + 1..t.end - 1]) {
                Ok(name) => EntryType::from_name(&name),
                Err(_) => EntryType::Other,
            },
            _ => EntryType::Other,
        };
        let key_of = |v: Option<Value>, unique: &mut u64| v.map_or(Key::Undefined, |v| Key::from_value(src, v, unique));
        match sk.ty {
            EntryType::Label | EntryType::ContextEdit => sk.target = key_of(target, unique),
            EntryType::Compaction => sk.target = key_of(first_kept, unique),
            _ => {}
        }
        if !matches!(sk.ty, EntryType::Compaction) {
            sk.retained_tail = false;
        }
        sk.label_truthy = label.is_some_and(|l| l.truthy(src));
        if sk.ty == EntryType::Message {
            sk.role = match (message, message_role) {
                (Some(m), Some(role)) if m.kind == Kind::Object => role_of(src, role),
                _ => message_role_of(src, message),
            };
        }
        sk.time = timestamp_ms(src, timestamp);
        sk
    }
}

/// Values per entry in the facade's facts (see `Skeleton::from_facts`).
pub const FACTS_PER_ENTRY: usize = 9;

impl Skeleton {
    /// The skeletons of entry objects the facade holds (built by an append, or handed to
    /// `inMemory`), from what JS sees of each: a JSON array of `FACTS_PER_ENTRY` values per
    /// entry, `type, role, id, parentId, targetId, firstKeptEntryId, timestamp, label,
    /// retainedTail`:
    /// - `type`: the string, or any other value when it is not one;
    /// - `role`: `message.role` when a string; `null` when `message` is null or undefined
    ///   (the reference's read of `.role` throws); anything else otherwise;
    /// - the four ids as `Key::decode` encodings (JS's `SameValueZero` classes);
    /// - `timestamp`: the string, or `null` when it is not one (JS computes its time);
    /// - `label`: its truthiness; `retainedTail`: whether it is an array.
    ///
    /// The object's JSON would not do: `JSON.stringify` turns `Infinity` into `null` and
    /// drops what the object's own reads see (a `toJSON`, an inherited `role`).
    pub fn from_facts(facts: &[u8]) -> std::result::Result<Vec<Skeleton>, String> {
        let bad = || "entry facts must be a JSON array of 9 values per entry".to_string();
        let array = json::parse_document(facts).filter(|v| v.kind == Kind::Array).ok_or_else(bad)?;
        let mut values = Vec::new();
        json::for_each_element(facts, array, |v| values.push(v));
        if values.len() % FACTS_PER_ENTRY != 0 {
            return Err(bad());
        }
        let string = |v: Value| match v.kind {
            Kind::String => json::decode_string(&facts[v.start + 1..v.end - 1]).ok(),
            _ => None,
        };
        let key = |v: Value| string(v).map_or(Key::Undefined, |k| Key::decode(&k));
        let mut out = Vec::with_capacity(values.len() / FACTS_PER_ENTRY);
        for f in values.chunks_exact(FACTS_PER_ENTRY) {
            let ty = string(f[0]).map_or(EntryType::Other, |t| EntryType::from_name(&t));
            let role = match f[1].kind {
                Kind::Null => Role::NoMessage,
                _ => string(f[1]).map_or(Role::Other, |r| Role::from_name(&r)),
            };
            let target = match ty {
                EntryType::Label | EntryType::ContextEdit => key(f[4]),
                EntryType::Compaction => key(f[5]),
                _ => Key::Undefined,
            };
            out.push(Skeleton {
                ty,
                id: key(f[2]),
                parent: key(f[3]),
                target,
                label_truthy: f[7].kind == Kind::True,
                role: if ty == EntryType::Message { role } else { Role::Other },
                retained_tail: ty == EntryType::Compaction && f[8].kind == Kind::True,
                time: string(f[6]).and_then(|t| parse_iso_ms(t.as_bytes())),
            });
        }
        Ok(out)
    }
}

/// Values per item in the facts of `Skeleton::linked_from_facts`.
pub const LINKED_FACTS_PER_ITEM: usize = 7;

impl Skeleton {
    /// The skeletons and parent links of the objects a free function's path can reach
    /// (`buildSessionPath` over the caller's entries and index), from what JS sees of each:
    /// `LINKED_FACTS_PER_ITEM` integers per item, `type, role, id, targetId,
    /// firstKeptEntryId, parent, flags`:
    /// - `type`: an index into `names` (a JSON array of strings), or -1 when not a string;
    /// - `role`: an index into `names`; -1 when `message.role` is not a string, -2 when
    ///   `message` is null or undefined (the reference's read of `.role` throws);
    /// - the three ids as JS's `SameValueZero` classes (objects by identity), numbered from
    ///   0; -2 for NaN (a `Map` finds it; `===` does not);
    /// - `parent`: the item `parentId` leads to (`parentId ? index.get(parentId)`), -1: none;
    /// - `flags`: bit 0, `retainedTail` is an array.
    pub fn linked_from_facts(names: &[u8], facts: &[i32]) -> std::result::Result<LinkedItems, String> {
        let bad = || "linked facts must be 7 integers per item and a JSON array of names".to_string();
        if !facts.len().is_multiple_of(LINKED_FACTS_PER_ITEM) {
            return Err(bad());
        }
        let array = json::parse_document(names).filter(|v| v.kind == Kind::Array).ok_or_else(bad)?;
        let mut list = Vec::new();
        json::for_each_element(names, array, |v| {
            list.push(match v.kind {
                Kind::String => json::decode_string(&names[v.start + 1..v.end - 1]).unwrap_or_default(),
                _ => String::new(),
            })
        });
        let names = list;
        let n = facts.len() / LINKED_FACTS_PER_ITEM;
        let name = |i: i32| usize::try_from(i).ok().and_then(|i| names.get(i)).map(String::as_str);
        let key = |c: i32| match c {
            -2 => Key::num(f64::NAN),
            c if c >= 0 => Key::num(c as f64),
            _ => Key::Unique(0),
        };
        let mut items = Vec::with_capacity(n);
        let mut parents = Vec::with_capacity(n);
        for f in facts.chunks_exact(LINKED_FACTS_PER_ITEM) {
            let ty = name(f[0]).map_or(EntryType::Other, EntryType::from_name);
            let role = match f[1] {
                -2 => Role::NoMessage,
                r => name(r).map_or(Role::Other, Role::from_name),
            };
            let target = match ty {
                EntryType::Label | EntryType::ContextEdit => key(f[3]),
                EntryType::Compaction => key(f[4]),
                _ => Key::Undefined,
            };
            let parent = match u32::try_from(f[5]) {
                Ok(p) if (p as usize) < n => Some(p),
                Ok(_) => return Err(bad()),
                Err(_) => None,
            };
            items.push(Skeleton {
                ty,
                id: key(f[2]),
                parent: Key::Undefined,
                target,
                label_truthy: false,
                role: if ty == EntryType::Message { role } else { Role::Other },
                retained_tail: ty == EntryType::Compaction && f[6] & 1 == 1,
                time: None,
            });
            parents.push(parent);
        }
        Ok(LinkedItems { items, parents })
    }
}

/// Objects a free function reaches, as `Skeleton::linked_from_facts` reads them.
#[derive(Debug, PartialEq)]
pub struct LinkedItems {
    pub items: Vec<Skeleton>,
    /// The item each one's `parentId` leads to.
    pub parents: Vec<Option<u32>>,
}

fn message_role_of(src: &[u8], message: Option<Value>) -> Role {
    let Some(m) = message else { return Role::NoMessage };
    match m.kind {
        Kind::Null => Role::NoMessage,
        Kind::Object => {
            let mut role = None;
            json::for_each_member(src, m, |k, v| {
                if is_role_key(k) {
                    role = Some(v);
                }
            });
            role_of(src, role)
        }
        // Strings, numbers, booleans and arrays have no `role`.
        _ => Role::Other,
    }
}

fn is_role_key(k: &[u8]) -> bool {
    k == b"role" || (k.contains(&b'\\') && json::decode_string(k).ok().as_deref() == Some("role"))
}

fn role_of(src: &[u8], role: Option<Value>) -> Role {
    match role {
        Some(v) if v.kind == Kind::String => {
            json::decode_string(&src[v.start + 1..v.end - 1]).map_or(Role::Other, |r| Role::from_name(&r))
        }
        _ => Role::Other,
    }
}

fn timestamp_ms(src: &[u8], ts: Option<Value>) -> Option<f64> {
    match ts {
        None => Some(f64::NAN), // new Date(undefined)
        Some(v) if v.kind == Kind::String => parse_iso_ms(&src[v.start + 1..v.end - 1]),
        Some(_) => None,
    }
}

/// `Date.parse` for the exact shape `YYYY-MM-DDTHH:MM:SS.sssZ` written by `toISOString()`.
/// Anything else returns `None`, so JS computes it (V8's parser accepts far more).
pub fn parse_iso_ms(s: &[u8]) -> Option<f64> {
    if s.len() != 24
        || s[4] != b'-'
        || s[7] != b'-'
        || s[10] != b'T'
        || s[13] != b':'
        || s[16] != b':'
        || s[19] != b'.'
        || s[23] != b'Z'
    {
        return None;
    }
    let num = |a: usize, b: usize| -> Option<i64> {
        let mut n = 0i64;
        for &c in &s[a..b] {
            if !c.is_ascii_digit() {
                return None;
            }
            n = n * 10 + (c - b'0') as i64;
        }
        Some(n)
    };
    let (y, mo, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (h, mi, sec, ms) = (num(11, 13)?, num(14, 16)?, num(17, 19)?, num(20, 23)?);
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || sec > 59 {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    Some((((days * 24 + h) * 60 + mi) * 60 + sec) as f64 * 1000.0 + ms as f64)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sk(line: &str) -> Skeleton {
        let v = json::parse_document(line.as_bytes()).unwrap();
        Skeleton::from_value(line.as_bytes(), v, &mut 0)
    }

    #[test]
    fn skeletons_from_facts_match_the_lines() {
        let facts = br#"["label","assistant","sl1","sm1","sm1","sx",null,true,true,
            "compaction",null,"sc","sl1","sx","sm1","2024-12-03T14:00:01.000Z",true,true,
            "message",null,"sm2","l","u","u","2024-12-03T14:00:01.000Z",false,false,
            "message",false,"sm3","nInfinity","u","u",null,false,false,
            7,"user","o","u","u","u","x",true,true]"#;
        let got = Skeleton::from_facts(facts).unwrap();
        // What each line's own skeleton says (the facts of an object that JSON holds exactly).
        let lines = [
            r#"{"type":"label","id":"l1","parentId":"m1","targetId":"m1","label":"x","message":{"role":"assistant"},"retainedTail":[]}"#,
            r#"{"type":"compaction","id":"c","parentId":"l1","timestamp":"2024-12-03T14:00:01.000Z","firstKeptEntryId":"m1","targetId":"x","label":1,"retainedTail":[]}"#,
            r#"{"type":"message","id":"m2","parentId":null,"timestamp":"2024-12-03T14:00:01.000Z","message":null}"#,
        ];
        for (i, line) in lines.iter().enumerate() {
            let mut line_sk = sk(line);
            if i == 0 {
                line_sk.time = None; // a missing timestamp: JS computes new Date(undefined)
            }
            assert_eq!(got[i], line_sk, "{line}");
        }
        // A role that is not a string; a parent JSON cannot hold (`Infinity`).
        assert_eq!(got[3].role, Role::Other);
        assert_eq!(got[3].parent, Key::num(f64::INFINITY));
        // A type that is not a string: no target, no role, no retainedTail (the label's
        // truthiness is kept as a line's is; only a label entry's is read).
        assert_eq!((got[4].ty, got[4].target.clone()), (EntryType::Other, Key::Undefined));
        assert_eq!((got[4].role, got[4].retained_tail, got[4].id.strict_eq(&got[4].id)), (Role::Other, false, false));
        assert!(Skeleton::from_facts(br#"["message"]"#).is_err());
        assert!(Skeleton::from_facts(b"{}").is_err());
    }

    #[test]
    fn message_skeleton() {
        let s = sk(
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"hi"}}"#,
        );
        assert_eq!(s.ty, EntryType::Message);
        assert_eq!(s.id, Key::Str("a1".into()));
        assert_eq!(s.parent, Key::Null);
        assert_eq!(s.role, Role::User);
        assert_eq!(s.time, Some(1733234401000.0));
    }

    #[test]
    fn odd_values() {
        let s = sk(r#"{"type":"m\u0065ssage","id":5,"parentId":-0,"message":null,"id":"x\ud800"}"#);
        assert_eq!(s.ty, EntryType::Message);
        assert_eq!(s.id, Key::IllStr("\"x\\ud800\"".into()));
        assert_eq!(s.parent, Key::num(0.0));
        assert!(!s.parent.truthy());
        assert_eq!(s.role, Role::NoMessage);
        assert!(s.time.unwrap().is_nan());
        let l = sk(r#"{"type":"label","targetId":{"a":1},"label":0,"timestamp":5}"#);
        assert!(matches!(l.target, Key::Unique(_)));
        assert!(!l.label_truthy);
        assert_eq!(l.time, None);
        let c = sk(r#"{"type":"compaction","firstKeptEntryId":"k","retainedTail":[]}"#);
        assert_eq!(c.target, Key::Str("k".into()));
        assert!(c.retained_tail);
    }

    #[test]
    fn iso_dates() {
        assert_eq!(parse_iso_ms(b"1970-01-01T00:00:00.000Z"), Some(0.0));
        assert_eq!(parse_iso_ms(b"2000-02-29T23:59:59.999Z"), Some(951868799999.0));
        assert_eq!(parse_iso_ms(b"1969-12-31T23:59:59.999Z"), Some(-1.0));
        assert_eq!(parse_iso_ms(b"2024-02-31T00:00:00.000Z"), None);
        assert_eq!(parse_iso_ms(b"2024-01-01T00:00:00Z"), None);
    }

    #[test]
    fn key_decoding() {
        assert_eq!(Key::decode("sabc"), Key::Str("abc".into()));
        assert_eq!(Key::decode("n-0"), Key::num(0.0));
        assert_eq!(Key::decode("u"), Key::Undefined);
        assert_eq!(Key::decode("l"), Key::Null);
        assert!(!Key::decode("o").strict_eq(&Key::decode("o")));
    }
}
