//! Re-fingerprinting from the stored texts ([`Db::reindex_spec`]): the database rebuilt under
//! another spec (k, shingle width, normalizer, method) without the harvest.
//!
//! The new database is made beside the old one (`DB.reindex-new`) by the ingest pipeline, from
//! the stored documents in id order (their keys, texts, metadata and bibliographic values), so it
//! equals a fresh ingest of those documents under the new spec: the same ids, pairs and groups.
//! The old database stays locked meanwhile (no writer can change it). Then it is moved aside
//! (`DB.reindex-old`), the new one takes its name, and the old one is removed. A crash before the
//! first rename leaves the old database in place (the next run removes the half-made new one); a
//! crash between the two renames leaves both whole, under those two names (docs/durability.md).

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::pipeline::IngestOptions;

use crate::db::handle::Db;
use crate::db::options::{CreateOptions, Options};

/// What [`Db::reindex_spec`] did.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct RespecReport {
    /// Documents fingerprinted again.
    pub docs: u64,
    /// The spec before and after (their short forms).
    pub spec_before: String,
    /// See `spec_before`.
    pub spec_after: String,
    /// Duplicate groups after.
    pub groups: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// `DB` + `suffix` beside it.
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

fn sync_dir(dir: &Path) -> Result<()> {
    fs::File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(|e| Error::io("sync directory", dir, e))
}

impl Db {
    /// Rebuilds the database at `path` from its stored texts under `create`'s spec and settings
    /// (`create.store_text` is forced on: the new database keeps the texts too). Needs the writer
    /// lock ([`Error::Locked`] while another handle writes) and a database that stores texts.
    /// `progress(done)` is called as documents are committed.
    pub fn reindex_spec(path: impl AsRef<Path>, create: &CreateOptions, mut progress: impl FnMut(u64)) -> Result<RespecReport> {
        let path = path.as_ref();
        let started = std::time::Instant::now();
        let new_path = beside(path, ".reindex-new");
        let old_path = beside(path, ".reindex-old");
        if old_path.exists() {
            return Err(Error::AlreadyExists { path: old_path });
        }
        let src = Db::open_with(path, Options::default())?;
        check_reindexable(&src, path)?;
        if new_path.exists() {
            fs::remove_dir_all(&new_path).map_err(|e| Error::io("remove a stopped reindex", &new_path, e))?;
        }
        let create = CreateOptions {
            store_text: true,
            ..create.clone()
        };
        let spec_before = src.spec().to_string();
        let dst = Db::create_with(&new_path, &create, Options::default())?;
        let stats = copy_stored_docs(&src, &dst, &mut progress)?;
        dst.flush()?;
        let groups = dst.stats().groups;
        let spec_after = dst.spec().to_string();
        drop(dst);
        drop(src);
        swap_in(path, &new_path, &old_path)?;
        progress(stats.stored);
        Ok(RespecReport {
            docs: stats.stored,
            spec_before,
            spec_after,
            groups,
            seconds: started.elapsed().as_secs_f64(),
        })
    }
}

/// Refuses a source database that cannot be fingerprinted again: one without stored texts, or
/// one with a semantic channel.
fn check_reindexable(src: &Db, path: &Path) -> Result<()> {
    if !src.texts().enabled() {
        return Err(Error::InvalidOption {
            name: "spec",
            message: format!(
                "{} does not store texts, so it cannot be fingerprinted again without them; ingest the corpus into a new database (`fpdb init --store-text`)",
                path.display()
            ),
        });
    }
    #[cfg(feature = "semantic")]
    if src.semantic().spec().is_some() {
        return Err(Error::InvalidOption {
            name: "spec",
            message: "the database has a semantic channel, which a re-fingerprinted database does not carry over yet; export it, or enable the channel again afterwards".into(),
        });
    }
    Ok(())
}

/// Ingests `src`'s stored documents, in id order, into `dst` through the pipeline (a reader thread
/// feeding it); `progress(done)` every 65536 documents. The first failed document's error fails it.
/// The stored records go over as they are: `dst` adopts `src`'s dictionaries, and each record is
/// handed over with its document, so no text is compressed again (the text itself is still read:
/// the fingerprint needs it).
fn copy_stored_docs(src: &Db, dst: &Db, progress: &mut impl FnMut(u64)) -> Result<crate::pipeline::IngestStats> {
    let (Some(from), Some(to)) = (src.text_side(), dst.text_side()) else {
        return Err(Error::InvalidOption {
            name: "spec",
            message: "both databases of a re-fingerprinting store texts".into(),
        });
    };
    to.adopt(&dst.inner, from)?;
    let stats = std::thread::scope(|s| -> Result<crate::pipeline::IngestStats> {
        let (tx, rx) = crossbeam_channel::bounded(4096);
        let reader = s.spawn(move || {
            src.stored_records(|_, doc, record| {
                to.pass(&doc.key, record);
                // The pipeline stopped (its error is reported below): stop reading.
                tx.send(Ok(doc)).map_err(|_| Error::input(None, "the re-fingerprinting stopped"))
            })
        });
        let mut done = 0u64;
        let mut failed: Option<Error> = None;
        let stats = dst.ingest(rx, &IngestOptions::default(), |r| {
            done += 1;
            if let (Err(e), None) = (r.result, &failed) {
                failed = Some(e);
            }
            if done.is_multiple_of(65536) {
                progress(done);
            }
        });
        let read = reader.join().map_err(|_| Error::Panicked {
            stage: "reindex reader",
            message: "the stored-text reader panicked".into(),
        })?;
        let stats = stats?;
        read?;
        if let Some(e) = failed {
            return Err(e);
        }
        Ok(stats)
    });
    to.end_passing();
    stats
}

/// Moves the database at `path` aside to `old_path`, the one at `new_path` into its place, syncs
/// the parent directory, then removes the old one.
fn swap_in(path: &Path, new_path: &Path, old_path: &Path) -> Result<()> {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs::rename(path, old_path).map_err(|e| Error::io("move the old database aside", path, e))?;
    fs::rename(new_path, path).map_err(|e| Error::io("move the new database in", new_path, e))?;
    sync_dir(parent)?;
    fs::remove_dir_all(old_path).map_err(|e| Error::io("remove the old database", old_path, e))
}
