//! Durations as the verdict records them.

use std::time::Duration;

/// Whole milliseconds, saturating (a verdict's timings are `u64`).
pub fn ms(d: Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
}
