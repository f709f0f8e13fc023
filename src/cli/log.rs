//! `-v`: what the library says it does (the `log` facade), on stderr, one line each. The
//! library never prints; without `-v` nothing is installed and its records go nowhere.

use log::{Level, LevelFilter, Log, Metadata, Record};

struct Stderr;

impl Log for Stderr {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target().starts_with("patchgrade")
    }

    fn log(&self, record: &Record<'_>) {
        if self.enabled(record.metadata()) {
            let level = match record.level() {
                Level::Error | Level::Warn => "warning: ",
                _ => "",
            };
            eprintln!("patchgrade: {level}{}", record.args());
        }
    }

    fn flush(&self) {}
}

/// Say what patchgrade does: `-v` its steps, `-vv` also each command's script.
pub fn install(verbosity: u8) {
    let level = match verbosity {
        0 => return,
        1 => LevelFilter::Info,
        _ => LevelFilter::Debug,
    };
    if log::set_logger(&Stderr).is_ok() {
        log::set_max_level(level);
    }
}
