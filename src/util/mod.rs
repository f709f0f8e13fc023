//! Small helpers every stage uses, with no knowledge of patches, tests or verdicts.
//!
//! - [`atomic`]: output files written whole or not at all.
//! - [`digest`]: content addresses (git's blob hash), for cache keys and pool slots.
//! - [`time`]: durations as the milliseconds the verdict records.
//! - [`list`]: lists without repeats, in order.
//! - [`text`]: text cut to a size bound on a character boundary.
//! - [`pyc`]: hash-checked Python bytecode (PEP 552), sealed for the source it came from.
//! - [`names`]: the name tables of enums (`--runner`, `--ids`, outcomes), parsed and listed
//!   from one `ALL` list each.

pub mod atomic;
pub mod digest;
pub mod list;
pub mod names;
pub mod pyc;
pub mod text;
pub mod time;
