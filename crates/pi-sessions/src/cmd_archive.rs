//! placeholder
use super::args::{ArchiveArgs, RestoreArgs};
use super::{CliError, Ctx, Out};
pub fn archive(_ctx: &Ctx, _a: &ArchiveArgs, _out: Out) -> Result<i32, CliError> { Ok(0) }
pub fn restore(_ctx: &Ctx, _a: &RestoreArgs, _out: Out) -> Result<i32, CliError> { Ok(0) }
