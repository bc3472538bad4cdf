//! One way to walk a corpus: the memory policy of the commands that read their inputs twice
//! ([`holds`]: hold what they need of small inputs, read large ones again). Nothing here prints
//! or shows progress.

use crate::input::{self, Discovered};

/// Inputs up to this many bytes are held in memory by a sweep (about 0.6 bytes per input byte), or
/// their rows by a per-request table (about 0.3); larger ones are read twice, which costs a second
/// import but no counting (the meter's cache has every text by then).
pub const HOLD_BYTES: u64 = 256 << 20;

/// What each file adds to its size in [`holds`]: a small file held costs far more than its bytes
/// (its items, their measures and strings). Measured: `sweep -j 2` of 60,000 copies of a 2 KB
/// session (17 items), 124 MB of input, held 566 MB in 3.1 s against 129 MB in 1.7 s not held, 7.3
/// KB a file; so they are no longer held, while the shared corpus (55 files, 19 MB) and its 13
/// copies (246 MB) still are.
pub const HOLD_BYTES_PER_FILE: u64 = 8 << 10;

/// Whether a pass holds what it needs of the inputs found rather than read them twice. An input
/// that cannot be read again ([`input::rereadable`]: standard input, a pipe) is held either way,
/// by the pass itself: read twice, it gave a per-request table no rows and a sweep other per-tool
/// savings.
pub fn holds(found: &Discovered, low_memory: bool) -> bool {
    !low_memory && found.files.iter().map(|f| input::size(f) + HOLD_BYTES_PER_FILE).sum::<u64>() <= HOLD_BYTES
}
