//! `migrateSessionEntries`' plan (`migrate::plan`) for the facade, which applies it to the
//! caller's objects.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use pi_session_core::migrate::{self, Fact, Step};

/// The plan as the facade applies it: `steps` holds `[position, code, target, parent]` per
/// step (codes: 0 read `type` and throw, 1 `version = 2`, 2 `version = 3`, 3 `id` and
/// `parentId` (`parent`: an index in `ids`, -1 for null; `target`: -2 nothing, -1 delete
/// `firstKeptEntryIndex`, else set `firstKeptEntryId` from that position's id, then delete),
/// 4 `message.role = "custom"`); `ids` the new ids in the order of the code-3 steps.
#[napi(object)]
pub struct MigrationPlan {
    pub migrated: bool,
    pub steps: Int32Array,
    pub ids: Vec<String>,
}

/// Whether `migrateSessionEntries` changes anything for a header version (`Number(version)`).
#[napi]
pub fn migrates(version: f64) -> bool {
    migrate::plan(version, &[], migrate::random_id).0
}

/// The plan for `version` (`Number(header?.version ?? 1)`) and `facts`, two numbers per
/// entry: a kind (0 other, 1 header, 2 compaction, 3 hook message, 4 null or undefined,
/// 5 another falsy value) and, for a compaction, its `firstKeptEntryIndex` (-2: not a
/// number, -1: a number that names no array index, else the index).
#[napi]
pub fn migration_plan(version: f64, facts: Float64Array) -> MigrationPlan {
    let facts: Vec<Fact> = facts
        .chunks_exact(2)
        .map(|f| match f[0] as u8 {
            1 => Fact::Session,
            2 if f[1] == -2.0 => Fact::Compaction(None),
            2 => Fact::Compaction(Some((f[1] >= 0.0).then_some(f[1] as usize))),
            3 => Fact::HookMessage,
            4 => Fact::Nullish,
            5 => Fact::Falsy,
            _ => Fact::Other,
        })
        .collect();
    let (migrated, steps) = migrate::plan(version, &facts, migrate::random_id);
    let mut flat = Vec::with_capacity(steps.len() * 4);
    let mut ids = Vec::new();
    for (pos, step) in steps {
        let (code, target, parent) = match step {
            Step::Throw => (0, -2, -1),
            Step::Version(2) => (1, -2, -1),
            Step::Version(_) => (2, -2, -1),
            Step::Ids { id, parent, first_kept } => {
                let parent = if parent.is_some() { ids.len() as i32 - 1 } else { -1 };
                ids.push(id);
                let target = match first_kept {
                    None => -2,
                    Some(None) => -1,
                    Some(Some(t)) => t as i32,
                };
                (3, target, parent)
            }
            Step::Custom => (4, -2, -1),
        };
        flat.extend_from_slice(&[pos as i32, code, target, parent]);
    }
    MigrationPlan { migrated, steps: Int32Array::new(flat), ids }
}
