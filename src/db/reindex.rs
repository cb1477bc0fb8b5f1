//! Re-layout: rebuild the permuted tables with another number of tables ([`Db::reindex`]), so the
//! layout can follow the database's size (`index::layout::best_tables`).
//!
//! **Crash safety.** The new tables are written under the next table generation's column-family
//! names (`store::keys::table_cf`) as sorted SST files ingested whole (`ingest_external_file`:
//! atomic per file, durable when it returns); nothing the current generation reads changes. Then
//! one synced `WriteBatch` switches meta `config` (the new `tables`) and meta `table_gen`. A crash
//! before that batch leaves the old generation in force and the half-built new one is dropped by
//! the next writable open; a crash after it leaves the new generation in force and the next
//! writable open drops the old one. Either way every query sees exactly one complete generation.
//!
//! **Readers.** `reindex` holds the database's writer lock (no other writer runs), builds from the
//! documents' stored SimHashes and does not touch doc records, segments or the other indexes.
//! Read-only handles opened before it keep answering from the generation they opened.

use std::path::Path;

use rocksdb::{WriteBatch, WriteOptions, DB};

use crate::error::{Error, Result};
use crate::failpoint;
use crate::fingerprint::method::Method;
use crate::index::Layout;
use crate::store::doc_record;
use crate::store::keys::{table_cf, META_TABLE_GEN};

use super::cfs::meta_cf;
use super::handle::Db;
use super::options::{Options, Tables};

/// What [`Db::reindex`] did.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct ReindexReport {
    /// Live documents indexed.
    pub docs: u64,
    /// Tables before.
    pub tables_before: u32,
    /// Tables after (equal to `tables_before` when nothing changed).
    pub tables_after: u32,
    /// Table generation now in force.
    pub generation: u32,
    /// Whether the tables were rebuilt.
    pub changed: bool,
    /// Modelled query time at the default distance before and after, in µs
    /// (`index::layout::query_cost_ns`).
    pub model_us_before: f64,
    /// See `model_us_before`.
    pub model_us_after: f64,
}

impl Db {
    /// Rebuilds the tables of the database at `path` with `tables` tables (`Tables::Auto`: the
    /// modelled best for its current size and default distance, `index::layout::best_tables`).
    /// Needs the writer lock (fails with [`Error::Locked`] while another handle writes). Queries
    /// give the same results before and after, for every k: only their cost changes.
    /// `progress(done, total)` is called once per table written.
    pub fn reindex(path: impl AsRef<Path>, tables: Tables, mut progress: impl FnMut(u32, u32)) -> Result<ReindexReport> {
        let mut db = Db::open_with(
            path,
            Options {
                mirror: false,
                ..Options::default()
            },
        )?;
        let rocks_path = db.inner.rocks_path.clone();
        let inner = std::sync::Arc::get_mut(&mut db.inner)
            .ok_or_else(|| Error::corrupt(&rocks_path, None, "a fresh handle is shared (internal error)"))?;
        if matches!(inner.spec.method, Method::MultiLexicon(_)) {
            return Err(Error::InvalidOption {
                name: "tables",
                message: "multi-lexicon lays out its own index with the table count, so it cannot be re-laid out in place; \
                          export the documents and ingest them into a database created with the --tables you want"
                    .into(),
            });
        }
        let k = inner.config.max_distance;
        let fps: Vec<(u64, u64)> = inner.state.get_mut().docs.iter().map(|(&id, d)| (id, d.simhash)).collect();
        let n = fps.len() as u64;
        let before = inner.config.tables;
        let after = tables.resolve_for(k, n)?;
        let new_layout = Layout::new(after).ok_or_else(|| Error::InvalidOption {
            name: "tables",
            message: format!("no layout with {after} tables"),
        })?;
        let model = |l: &Layout| crate::index::layout::query_cost_ns(l, k, n) / 1000.0;
        let mut report = ReindexReport {
            docs: n,
            tables_before: before,
            tables_after: after,
            generation: inner.table_gen,
            changed: after != before,
            model_us_before: model(&inner.layout),
            model_us_after: model(&new_layout),
        };
        if !report.changed {
            return Ok(report);
        }
        let (old_gen, gen) = (
            inner.table_gen,
            inner
                .table_gen
                .checked_add(1)
                .ok_or_else(|| Error::corrupt(&rocks_path, None, "the table generation is at its maximum"))?,
        );
        // Table files of a re-layout that stopped before ingesting them (RocksDB ignores them).
        super::background::sst::remove_stale_files(&rocks_path, "reindex-")?;
        build_tables(&mut inner.base.rocks, &rocks_path, gen, &new_layout, &fps, &mut progress)?;
        // The switch: config and generation in one synced batch.
        let config = doc_record::DbConfig {
            tables: after,
            ..inner.config.clone()
        };
        switch_generation(&inner.rocks, &rocks_path, &config, gen)?;
        inner.base.config = config;
        inner.base.layout = new_layout;
        inner.base.table_gen = gen;
        report.generation = gen;
        failpoint!("reindex.switched");
        for i in 0..before as usize {
            inner
                .base
                .rocks
                .drop_cf(&table_cf(old_gen, i))
                .map_err(|e| Error::rocks("drop an old table column family", &rocks_path, e))?;
        }
        Ok(report)
    }
}

/// The tables of generation `gen` under `layout`: their column families created, one sorted file
/// each written and ingested (`progress(done, total)` after each).
fn build_tables(
    rocks: &mut DB,
    rocks_path: &Path,
    gen: u32,
    layout: &Layout,
    fps: &[(u64, u64)],
    progress: &mut impl FnMut(u32, u32),
) -> Result<()> {
    let after = layout.tables();
    let cf_opts = super::rocks_options::table_cf_options();
    for i in 0..after as usize {
        rocks
            .create_cf(table_cf(gen, i), &cf_opts)
            .map_err(|e| Error::rocks("create a table column family", rocks_path, e))?;
    }
    let mut keys: Vec<u128> = Vec::with_capacity(fps.len());
    for i in 0..after as usize {
        if !fps.is_empty() {
            let sst = rocks_path.join(format!("reindex-{gen}-{i}.sst"));
            super::background::sst::write_table_file(rocks_path, &sst, layout, i, fps, &mut keys)?;
            let cf = rocks
                .cf_handle(&table_cf(gen, i))
                .ok_or_else(|| Error::corrupt(rocks_path, None, "a table column family just created is missing"))?;
            super::background::sst::ingest_moved(rocks, cf, &sst, rocks_path, "ingest a table file")?;
        }
        progress(i as u32 + 1, after);
        failpoint!("reindex.table");
    }
    Ok(())
}

/// The switch to generation `gen` with `config`: both in one synced batch.
fn switch_generation(rocks: &DB, rocks_path: &Path, config: &doc_record::DbConfig, gen: u32) -> Result<()> {
    let meta = meta_cf(rocks, rocks_path)?;
    let mut b = WriteBatch::default();
    b.put_cf(meta, b"config", doc_record::encode_config(config)?);
    b.put_cf(meta, META_TABLE_GEN, gen.to_le_bytes());
    let mut wo = WriteOptions::default();
    wo.set_sync(true);
    rocks
        .write_opt(b, &wo)
        .map_err(|e| Error::rocks("switch the table generation", rocks_path, e))
}
