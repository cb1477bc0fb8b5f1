//! One batch's containment-index changes: a removed document's keys deleted in the batch's one
//! `WriteBatch`; a new document's added to the in-memory tail at publish, with the short-key set.

use rocksdb::{IteratorMode, WriteBatch};

use crate::error::Result;
use crate::fingerprint::containment::{stored_keys, KeyKind};
use crate::store::doc_record::ContainmentConfig;
use crate::store::keys::{contain_key, decode_contain_key, CF_CONTAIN};

use super::mem::ContainMem;
use super::search::scan_contain;
use super::Containment;
use crate::db::base::Base;
use crate::db::pending::Pending;
use crate::db::state::State;

/// The containment-index changes of one batch: keys to delete in RocksDB (documents removed, their
/// keys recomputed from their stored sets; written even for a document in the tail, whose entries a
/// stopped flush may have left in RocksDB), and what the publish applies to the tail and the
/// short-key set.
#[derive(Default)]
pub(super) struct ContainDelta {
    dels: Vec<[u8; 13]>,
    publish: TailDelta,
}

impl ContainDelta {
    /// Adds the deletes to the batch, sorted (RocksDB's memtable insert is cheapest in key order).
    pub(super) fn write(mut self, db: &Base, b: &mut WriteBatch) -> Result<TailDelta> {
        let cf = db.cf(CF_CONTAIN)?;
        self.dels.sort_unstable();
        for k in &self.dels {
            b.delete_cf(cf, k);
        }
        Ok(self.publish)
    }
}

/// A removed document's keys.
enum RemovedKeys {
    /// Recomputed from its stored set.
    Known(KeyKind, Vec<u32>),
    /// Its set could not be read: it is removed from every list; these short keys (found by
    /// scanning) leave the short-key set.
    Unknown { short: Vec<u32> },
}

/// What a committed batch changes in the tail and the short-key set; applied at publish.
#[derive(Default)]
pub(super) struct TailDelta {
    removed: Vec<(u64, RemovedKeys)>,
    added: Vec<(u64, KeyKind, Vec<u32>)>,
}

impl TailDelta {
    /// Applies the batch to the published tail and short-key set (under the state's write lock).
    pub(super) fn publish(self, mem: &mut ContainMem) -> Result<()> {
        for (id, keys) in self.removed {
            match keys {
                RemovedKeys::Known(kind, keys) => {
                    if kind == KeyKind::Short {
                        mem.short.remove(&keys);
                    }
                    mem.tail.remove(id, Some((kind, &keys)));
                }
                RemovedKeys::Unknown { short } => {
                    mem.short.remove(&short);
                    mem.tail.remove(id, None);
                }
            }
        }
        for (id, kind, keys) in self.added {
            if kind == KeyKind::Short {
                mem.short.add(&keys);
            }
            mem.tail.active.add(id, kind, &keys)?;
        }
        Ok(())
    }
}

impl Containment {
    /// The containment-index changes of a batch.
    pub(super) fn delta(&self, base: &Base, st: &State, cfg: ContainmentConfig, pend: &Pending) -> Result<ContainDelta> {
        let mem = self.mem();
        let n = cfg.sampling();
        let mut d = ContainDelta::default();
        for &id in &pend.deleted {
            // The keys are recomputed from the stored set; a damaged set (or a damaged record, left
            // out at open) cannot say which, so every entry naming the document is removed instead.
            let set = st.docs.get(&id).and_then(|m| st.segs.read(m.loc, id).ok());
            match set {
                Some(set) => {
                    let (kind, keys) = stored_keys(&set, n);
                    d.dels.extend(keys.iter().map(|&k| contain_key(kind, k, id)));
                    d.publish.removed.push((id, RemovedKeys::Known(kind, keys)));
                }
                None => {
                    let mut short = Vec::new();
                    for item in scan_contain(&base.rocks, base.cf(CF_CONTAIN)?, IteratorMode::Start) {
                        let (k, _) = item.map_err(base.rocks_err("scan containment index"))?;
                        if let Some((kind, s, doc)) = decode_contain_key(&k) {
                            if doc == id {
                                d.dels.push(contain_key(kind, s, id));
                                if kind == KeyKind::Short && id < mem.tail.floor {
                                    short.push(s);
                                }
                            }
                        }
                    }
                    // Its tail postings (and their short keys) go by a scan of the tail too.
                    for (kind, s) in mem.tail.keys() {
                        if kind == KeyKind::Short && mem.tail.list(kind, s).any(|(doc, _)| doc == id) {
                            short.push(s);
                        }
                    }
                    d.publish.removed.push((id, RemovedKeys::Unknown { short }));
                }
            }
        }
        for p in pend.new_docs.iter().filter(|p| p.alive) {
            let (kind, keys) = stored_keys(&p.fp.shingles, n);
            d.publish.added.push((p.id, kind, keys));
        }
        Ok(d)
    }
}
