//! RocksDB's options: the database's, each column family's, and those of the SST files written
//! outside the WAL (`db::background`). A leaf: nothing here calls back into the engine.

use rocksdb::{BlockBasedOptions, Cache};

use crate::store::keys::parse_table_cf;

/// RocksDB's flush threads (`max_background_flushes`), and the threads that ask for the close's
/// flushes. RocksDB's default for two background jobs is one flush thread.
pub(super) const FLUSH_THREADS: i32 = 2;

/// Options of a table column family created after open (`reindex`), as [`rocks_options`] gives at
/// open without the mirror, which `reindex` uses (with a cache of its own until the next open
/// shares one).
pub(super) fn table_cf_options() -> rocksdb::Options {
    rocks_options(&Cache::new_lru_cache(1 << 20), false)
}

pub(super) fn rocks_options(cache: &Cache, create: bool) -> rocksdb::Options {
    let mut o = rocksdb::Options::default();
    o.create_if_missing(create);
    o.create_missing_column_families(create);
    o.set_compression_type(rocksdb::DBCompressionType::None);
    o.set_block_based_table_factory(&block_options(cache));
    o.set_max_background_jobs(2);
    // Deprecated in favour of RocksDB's own split of `max_background_jobs` (a quarter to flushes,
    // at least one), but still honoured; two jobs would give one flush thread.
    #[allow(deprecated)]
    o.set_max_background_flushes(FLUSH_THREADS);
    // One writer thread makes every write (the writer lock), so RocksDB never groups concurrent
    // memtable inserts; off, the append-only memtable of the table column families is allowed.
    o.set_allow_concurrent_memtable_write(false);
    o
}

fn block_options(cache: &Cache) -> BlockBasedOptions {
    let mut bb = BlockBasedOptions::default();
    bb.set_block_cache(cache);
    bb.set_cache_index_and_filter_blocks(true);
    bb
}

/// Block options with a bloom filter (10 bits per key), partitioned, with a two-level index whose
/// top level stays pinned: a lookup or seek loads one small filter (and index) partition, not a
/// file's whole filter, which at 10M documents would not stay in the block cache (`contain`: ~180 MB
/// of filters; docs/performance.md, "Measured in git history").
fn partitioned_filter_options(cache: &Cache) -> BlockBasedOptions {
    let mut bb = block_options(cache);
    bb.set_bloom_filter(10.0, false);
    bb.set_index_type(rocksdb::BlockBasedIndexType::TwoLevelIndexSearch);
    bb.set_partition_filters(true);
    bb.set_pin_top_level_index_and_filter(true);
    bb
}

/// Options of the containment tail's SST files (`db::side::contain::tail`): the `contain` column family's
/// own, so that each file carries the posting-list prefix filter.
pub(super) fn contain_file_options() -> rocksdb::Options {
    cf_options(&Cache::new_lru_cache(1 << 20), crate::store::keys::CF_CONTAIN, false)
}

/// Sorted runs of the `contain` column family before RocksDB merges them. Every run is an ingested
/// tail file (`db::side::contain::tail`) spanning the whole key range, so each merge rewrote the whole
/// column family: at the default trigger of 4 that was 12% of the crawler loop's CPU at 1M
/// documents. A search seeks every run, but the prefix filter skips the runs that do not hold the
/// posting list (docs/performance.md, "Measured in git history").
const CONTAIN_RUNS_BEFORE_MERGE: i32 = 16;

/// The memtable size of a table column family with the mirror (RocksDB's default: 64 MB). A
/// vector memtable is sorted when it is flushed; at 64 MB (~1.9M entries) a 1M-document bulk load
/// never filled one, and the close sorted and wrote all of them at once: 1.6 s of a 10 s
/// `--dedup off` run. At 16 MB they flush in the background during the load, on the share of the
/// cores the pipeline leaves idle, and the close has 0.4 s left (1M documents: `--dedup off` +4-8%,
/// crawler loop +2-5%; docs/performance.md, "Measured in git history").
const TABLE_WRITE_BUFFER: usize = 16 << 20;

/// The options of column family `name`. With the in-memory mirror the SimHash table column families
/// are written for durability (the next open without a mirror, `check`, `reindex`) but never read
/// on the ingest or query path; their entries arrive as ingested files (`db::background::table_tail`), and
/// their memtables hold only deletes' tombstones (and the WAL's replay into a handle without the
/// mirror). Their memtable is RocksDB's append-only vector, sorted once
/// when it is flushed, instead of a skiplist whose every random insert searches it (the largest
/// cost of the writer; measured on 1M documents: crawler loop 1.14-1.17x, `--dedup off` 1.26x,
/// docs/performance.md, "Measured in git history"). A read of such a memtable (`check`, the damaged-record scan) sorts a
/// copy of it, which those whole-table scans can afford. Every other column family is read by the
/// writer or by queries and keeps the skiplist. The memtable kind is not stored: the WAL replays
/// into whichever the next open chooses.
///
/// The `contain` column family has a bloom filter on the posting-list prefix (`kind ‖ shingle`,
/// `store::keys::contain_prefix`), which its searches' prefix seeks consult
/// (`index::contain::RocksContain`), and merges its runs later ([`CONTAIN_RUNS_BEFORE_MERGE`]).
/// Its whole-range scans read in total order (`db::side::contain::search::scan_contain`).
pub(super) fn cf_options(cache: &Cache, name: &str, mirror: bool) -> rocksdb::Options {
    let mut o = rocks_options(cache, false);
    if mirror && parse_table_cf(name).is_some() {
        o.set_memtable_factory(rocksdb::MemtableFactory::Vector);
        o.set_write_buffer_size(TABLE_WRITE_BUFFER);
    }
    if name == crate::store::keys::CF_KEYS {
        // Every ingested document's key is looked up here first (`Db::committed_id`), and in a bulk
        // load nearly every lookup misses. A whole-key filter answers a miss without the index and
        // data blocks of every run; partitioned, so that a lookup loads one small filter partition
        // (whole-file filters of 10M keys thrashed the 64 MB block cache: docs/performance.md,
        // "Measured in git history"), and one on the memtable.
        o.set_block_based_table_factory(&partitioned_filter_options(cache));
        o.set_memtable_whole_key_filtering(true);
        o.set_memtable_prefix_bloom_ratio(0.05);
    }
    if name == crate::store::keys::CF_CONTAIN {
        o.set_prefix_extractor(rocksdb::SliceTransform::create_fixed_prefix(crate::store::keys::CONTAIN_PREFIX_LEN));
        // A filter on the prefix only, no whole-key filter.
        let mut bb = partitioned_filter_options(cache);
        bb.set_whole_key_filtering(false);
        o.set_block_based_table_factory(&bb);
        o.set_level_zero_file_num_compaction_trigger(CONTAIN_RUNS_BEFORE_MERGE);
        o.set_level_zero_slowdown_writes_trigger(3 * CONTAIN_RUNS_BEFORE_MERGE);
        o.set_level_zero_stop_writes_trigger(4 * CONTAIN_RUNS_BEFORE_MERGE);
    }
    o
}
