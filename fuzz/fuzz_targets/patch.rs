//! The patch reader on arbitrary bytes: an error, an empty patch or a patch whose files and
//! diff libgit2 can read again, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use patchgrade::internals::Patch;

fuzz_target!(|data: &[u8]| {
    if let Ok(Some(patch)) = Patch::parse(data) {
        assert!(!patch.files().is_empty());
        assert!(patch.diff().is_ok());
        let _ = patch.absolute_path();
    }
});
