//! `check` of the decisions: every entry of the column family decodes and agrees with the
//! published part; no group holds two documents a `distinct` decision separates (their classes
//! included); every class's live documents share one group; a held edge joins two live documents
//! and names a stored `distinct` decision; a same edge is an edge of `edges` between two live
//! documents of one class.

use std::collections::{BTreeMap, BTreeSet};

use rocksdb::{ColumnFamily, IteratorMode};

use super::model::{Classes, KeyPair};
use super::record::{self, Entry, CF_DECISIONS};
use super::{Decision, DecisionKind, Decisions};
use crate::db::base::Base;
use crate::db::state::State;
use crate::db::types::{CheckReport, Fault};
use crate::error::Result;
use crate::intmap::IntMap;
use crate::store::doc_record::DocRecord;
use crate::store::keys::{edge_key, CF_EDGES};

/// Where the check reports a fault: its document, its key, what is wrong.
trait Faults: FnMut(Option<u64>, Option<String>, String) {}
impl<F: FnMut(Option<u64>, Option<String>, String)> Faults for F {}

/// The column family's entries, decoded.
#[derive(Default)]
struct Stored {
    decisions: BTreeMap<KeyPair, Decision>,
    held: BTreeMap<(u64, u64), KeyPair>,
    same: BTreeSet<(u64, u64)>,
}

impl Decisions {
    pub(super) fn check_entries(&self, db: &Base, _st: &State, records: &IntMap<u64, DocRecord>, rep: &mut CheckReport) -> Result<()> {
        let path = db.rocks_path.display().to_string();
        let mut fault = |doc: Option<u64>, key: Option<String>, what: String| {
            rep.faults.push(Fault {
                doc,
                key,
                path: path.clone(),
                what,
            })
        };
        let Some(cf) = db.rocks.cf_handle(CF_DECISIONS) else {
            return Ok(());
        };
        let stored = read_entries(db, cf, &mut fault)?;
        let mem = self.mem();
        if mem.decisions != stored.decisions || mem.held != stored.held || mem.same_edges != stored.same {
            fault(None, None, "the decisions in memory differ from the column family".into());
        }
        let classes = Classes::build(stored.decisions.values());
        check_decided_groups(&stored.decisions, &classes, records, &mut fault);
        check_held(&stored, records, &mut fault);
        check_same_edges(db, &stored.same, &classes, records, &mut fault)
    }
}

/// Decodes every entry of the column family; an entry that does not decode is a fault.
fn read_entries(db: &Base, cf: &ColumnFamily, fault: &mut impl Faults) -> Result<Stored> {
    let mut stored = Stored::default();
    for item in db.rocks.iterator_cf(cf, IteratorMode::Start) {
        let (k, v) = item.map_err(db.rocks_err("scan decisions"))?;
        match record::decode(&db.rocks_path, &k, &v) {
            Ok(Entry::Decision(d)) => {
                stored.decisions.insert((d.a.clone(), d.b.clone()), d);
            }
            Ok(Entry::Held(e, p)) => {
                stored.held.insert(e, p);
            }
            Ok(Entry::SameEdge(e)) => {
                stored.same.insert(e);
            }
            Err(e) => fault(None, None, e.to_string()),
        }
    }
    Ok(stored)
}

/// Every class's live documents share one group, and no group holds both sides of a `distinct` decision.
fn check_decided_groups(
    decisions: &BTreeMap<KeyPair, Decision>,
    classes: &Classes,
    records: &IntMap<u64, DocRecord>,
    fault: &mut impl Faults,
) {
    // The live document of each decided key (from the records).
    let mut by_key: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for (&id, r) in records {
        by_key.insert(r.key.as_str(), (id, r.group));
    }
    let class_group = |c: usize| -> BTreeSet<u64> {
        classes
            .members(c)
            .iter()
            .filter_map(|k| by_key.get(k.as_str()).map(|x| x.1))
            .collect()
    };
    let mut seen = BTreeSet::new();
    for d in decisions.values() {
        let (Some(ca), Some(cb)) = (classes.class(&d.a), classes.class(&d.b)) else {
            continue;
        };
        match d.decision {
            DecisionKind::Same => {
                let groups = class_group(ca);
                if seen.insert(ca) && groups.len() > 1 {
                    fault(
                        None,
                        Some(d.a.clone()),
                        format!("the documents joined by `same` decisions (with {:?}) are in groups {groups:?}", d.b),
                    );
                }
            }
            DecisionKind::Distinct => {
                let (ga, gb) = (class_group(ca), class_group(cb));
                if let Some(g) = ga.intersection(&gb).next() {
                    fault(
                        Some(*g),
                        Some(d.a.clone()),
                        format!("group {g} holds both sides of `distinct {:?} {:?}`", d.a, d.b),
                    );
                }
                if ca == cb {
                    fault(
                        None,
                        Some(d.a.clone()),
                        format!("`distinct {:?} {:?}` contradicts the `same` decisions", d.a, d.b),
                    );
                }
            }
        }
    }
}

/// Every held edge joins two live documents and names a stored `distinct` decision.
fn check_held(stored: &Stored, records: &IntMap<u64, DocRecord>, fault: &mut impl Faults) {
    for (e, p) in &stored.held {
        if !records.contains_key(&e.0) || !records.contains_key(&e.1) {
            fault(Some(e.0), None, format!("held edge {e:?} names a document that is not live"));
        }
        if stored.decisions.get(p).is_none_or(|d| d.decision != DecisionKind::Distinct) {
            fault(
                Some(e.0),
                None,
                format!("held edge {e:?} names {p:?}, which is not a stored `distinct` decision"),
            );
        }
    }
}

/// Every same edge is an edge of `edges` between two live documents of one class.
fn check_same_edges(
    db: &Base,
    same: &BTreeSet<(u64, u64)>,
    classes: &Classes,
    records: &IntMap<u64, DocRecord>,
    fault: &mut impl Faults,
) -> Result<()> {
    let edges = db.cf(CF_EDGES)?;
    for e in same {
        let one_class = match (records.get(&e.0), records.get(&e.1)) {
            (Some(x), Some(y)) => classes.class(&x.key).is_some() && classes.class(&x.key) == classes.class(&y.key),
            _ => false,
        };
        let stored = db
            .rocks
            .get_cf(edges, edge_key(e.0, e.1))
            .map_err(db.rocks_err("read edge"))?
            .is_some();
        if !one_class || !stored {
            fault(
                Some(e.0),
                None,
                format!("same edge {e:?} is not an edge between two live documents of one class"),
            );
        }
    }
    Ok(())
}
