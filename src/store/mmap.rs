//! The only module with `unsafe`: memory-mapping sealed segment files.

use std::fs::File;

use memmap2::Mmap;

/// Maps a sealed segment read-only.
///
/// The caller guarantees the file is *sealed*: it has been fully written and fsynced and fpdb never
/// writes to or truncates it again while a mapping may exist (recovery truncates only before any map is
/// made; compaction writes new files and unlinks old ones, which leaves existing maps valid on Unix).
pub(crate) fn map_sealed(file: &File) -> std::io::Result<Mmap> {
    // SAFETY: memmap2 requires that the mapped file is not modified (or truncated) while the map lives,
    // otherwise reads through the slice are undefined behaviour. fpdb only maps sealed segments, which
    // by the protocol above are immutable for the lifetime of the process; the database directory is
    // locked against other fpdb writers. A foreign process editing the file is outside the contract
    // (as with any database file) and is detected by the per-record checksum where it matters.
    unsafe { Mmap::map(file) }
}
