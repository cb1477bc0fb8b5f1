//! Curator decisions (CF `decisions`, format in `record.rs`): `same A B` (a link that stands
//! whatever the scores say) and `distinct A B` (no group may hold both), kept by key with their
//! time, author and reason, and the groups kept under them.
//!
//! Its files: ARCHITECTURE.md, "`src/db/` — the handle" (the side indexes row).
//!
//! The invariants (`check.rs` verifies them):
//! * the keys joined by `same` decisions (transitively) form a class; every live document of a
//!   class is in one group, linked to the class's other live documents by edges of `edges` (an
//!   edge no verified duplicate makes is a *same edge*, recorded here so that an undo removes it);
//! * no group holds documents of two classes with a `distinct` decision between them: a verified
//!   edge that would join them is *held* here (naming the decision), never in `edges`; an undo of
//!   the decision retries its held edges;
//! * a decision never contradicts the others (a `distinct` pair inside a class is refused with
//!   the chain of `same` decisions as evidence).
//!
//! The writer's part ([`BatchPart::on_decide`]): a new document links to the live documents of
//! its key's class, then takes its verified duplicates best first, each unless its group would
//! join the document's across a `distinct` decision; those are reported in the outcome's
//! `not_linked` with the decision and held. With no decision stored the hook returns at once.

mod check;
pub(crate) mod model;
mod ops;
mod pairs;
mod record;
mod view;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use parking_lot::RwLock;
use rocksdb::{IteratorMode, WriteBatch};

use crate::error::{Error, Result};
use crate::store::keys::CF_KEYS;

use super::{Additions, BatchPart, Deciding, Opening, SideIndex};
use crate::db::base::Base;
use crate::db::cfs;
use crate::db::pending::Pending;
use crate::db::state::State;
use crate::db::types::{CheckReport, NotLinked};
use crate::intmap::IntMap;
use crate::store::doc_record::DocRecord;

use model::{Classes, KeyPair};
use record::{Entry, CF_DECISIONS};

pub use ops::CuratorDecisions;
pub use view::{EdgeChannel, GroupEdge, GroupMember, GroupSummary, GroupView, ReviewAnswer, ReviewOptions, ReviewOrder};

/// What a curator decided about two documents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum DecisionKind {
    /// The two are one work: they share a group whatever the scores say.
    Same,
    /// The two are different works: no group holds both.
    Distinct,
}

impl std::str::FromStr for DecisionKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "same" => Ok(DecisionKind::Same),
            "distinct" => Ok(DecisionKind::Distinct),
            _ => Err(Error::InvalidOption {
                name: "decision",
                message: format!("{s:?}: the decision is `same` or `distinct`"),
            }),
        }
    }
}

impl std::fmt::Display for DecisionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DecisionKind::Same => "same",
            DecisionKind::Distinct => "distinct",
        })
    }
}

/// A curator's decision about two keys (kept by key: it outlives a replaced document).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Decision {
    /// The smaller key (byte order).
    pub a: String,
    /// The larger key.
    pub b: String,
    /// `same` or `distinct`.
    pub decision: DecisionKind,
    /// When it was made (ms since the Unix epoch).
    pub at_ms: u64,
    /// Who made it.
    pub author: Option<String>,
    /// Why.
    pub reason: Option<String>,
}

/// The published part (changed only in `publish`, under the state's write lock).
#[derive(Clone, Debug, Default)]
pub(crate) struct Mem {
    pub(crate) decisions: BTreeMap<KeyPair, Decision>,
    pub(crate) classes: Classes,
    /// Verified edges held back by a `distinct` decision (lo, hi) → the decision.
    pub(crate) held: BTreeMap<(u64, u64), KeyPair>,
    /// Edges of `edges` that only a `same` decision makes (lo, hi).
    pub(crate) same_edges: BTreeSet<(u64, u64)>,
    /// The live document of every decided key.
    pub(crate) ids: HashMap<String, u64>,
}

/// One batch's changes to the entries, applied to `Mem` at the publish.
#[derive(Debug, Default)]
pub(crate) struct Delta {
    pub(crate) put: Vec<Decision>,
    pub(crate) delete: Vec<KeyPair>,
    pub(crate) held_put: Vec<((u64, u64), KeyPair)>,
    pub(crate) held_delete: Vec<(u64, u64)>,
    pub(crate) same_put: Vec<(u64, u64)>,
    pub(crate) same_delete: Vec<(u64, u64)>,
    /// Decided keys' live documents, for a decision on keys not decided before.
    pub(crate) ids: Vec<(String, u64)>,
}

/// The writer's plan for the document being decided (`on_decide` → `on_place`).
struct Plan {
    /// The class members it links to (no verified duplicate among them: same edges).
    same_links: Vec<u64>,
    withheld: Vec<(u64, KeyPair)>,
}

/// The decisions side index: registered in every database.
#[derive(Default)]
pub(crate) struct Decisions {
    mem: RwLock<Mem>,
}

fn lo_hi(a: u64, b: u64) -> (u64, u64) {
    (a.min(b), a.max(b))
}

impl Decisions {
    /// The published part (read with the state's read lock held, or by the writer).
    pub(crate) fn mem(&self) -> parking_lot::RwLockReadGuard<'_, Mem> {
        self.mem.read()
    }

    /// The writer's view of a key's live document: this batch's, else the published one unless
    /// deleted in the batch (or `old`, the one being replaced).
    fn live_id(mem: &Mem, pend: &Pending, key: &str, old: Option<u64>) -> Option<u64> {
        match pend.keys.get(key) {
            Some(&id) => Some(id),
            None => mem
                .ids
                .get(key)
                .copied()
                .filter(|id| !pend.deleted.contains(id) && Some(*id) != old),
        }
    }

    /// The constrained classes of each group that holds a live document of one, in the writer's
    /// view (`pend` over `st`; `old`: a document being replaced, no longer live).
    fn constrained_by_group(mem: &Mem, st: &State, pend: &Pending, old: Option<u64>) -> HashMap<u64, BTreeSet<usize>> {
        let mut out: HashMap<u64, BTreeSet<usize>> = HashMap::new();
        for &c in mem.classes.constrained() {
            for k in mem.classes.members(c) {
                if let Some(id) = Self::live_id(mem, pend, k, old) {
                    out.entry(pend.group_of(st, id)).or_default().insert(c);
                }
            }
        }
        out
    }

    /// The new document's links and withheld duplicates under the decisions.
    fn plan(mem: &Mem, d: &Deciding<'_>) -> (Vec<u64>, Vec<(u64, KeyPair)>) {
        let classes = &mem.classes;
        let own = classes.class(&d.doc.key);
        let links: Vec<u64> = own
            .map(|c| {
                classes
                    .members(c)
                    .iter()
                    .filter(|k| **k != d.doc.key)
                    .filter_map(|k| Self::live_id(mem, d.pend, k, d.old))
                    .collect()
            })
            .unwrap_or_default();
        let group = |id: u64| d.pend.group_of(d.st, id);
        let mut joined: BTreeSet<u64> = links.iter().map(|&l| group(l)).collect();
        let dup_groups: BTreeSet<u64> = d.dups.iter().map(|h| group(h.id)).collect();
        let own_constrained = own.is_some_and(|c| classes.constrained().contains(&c));
        if !own_constrained && joined.union(&dup_groups).count() < 2 {
            return (links, Vec::new());
        }
        // The constrained classes of every group involved.
        let classes_of = Self::constrained_by_group(mem, d.st, d.pend, d.old);
        let mut mine: BTreeSet<usize> = own.into_iter().collect();
        for g in &joined {
            mine.extend(classes_of.get(g).into_iter().flatten());
        }
        let mut withheld = Vec::new();
        for h in d.dups {
            let g = group(h.id);
            if joined.contains(&g) {
                continue;
            }
            let theirs = classes_of.get(&g).cloned().unwrap_or_default();
            match classes.blocking(&mine, &theirs) {
                Some(p) => withheld.push((h.id, p.clone())),
                None => {
                    joined.insert(g);
                    mine.extend(theirs);
                }
            }
        }
        (links, withheld)
    }

    /// For a link made after both documents were committed (`Db::link_committed`, the semantic
    /// channel's union links): the `distinct` decision that joining the groups of `a` and `b`
    /// would cross (two classes with it between them in one group), if any. Call with the writer
    /// lock held, before the link changes `pend`'s groups.
    fn blocking_link(&self, st: &State, pend: &Pending, a: u64, b: u64) -> Option<KeyPair> {
        let mem = self.mem.read();
        if mem.classes.constrained().is_empty() {
            return None;
        }
        let (ga, gb) = (pend.group_of(st, a), pend.group_of(st, b));
        if ga == gb {
            return None;
        }
        let classes_of = Self::constrained_by_group(&mem, st, pend, None);
        let none = BTreeSet::new();
        let classes_in = |g: u64| classes_of.get(&g).unwrap_or(&none);
        mem.classes.blocking(classes_in(ga), classes_in(gb)).cloned()
    }

    /// Applies a committed delta (the state's write lock held by the caller).
    fn apply(&self, pend: &Pending, delta: Delta) {
        let mut m = self.mem.write();
        if !pend.deleted.is_empty() {
            m.ids.retain(|_, id| !pend.deleted.contains(id));
        }
        let decided = !delta.put.is_empty() || !delta.delete.is_empty();
        for p in &delta.delete {
            m.decisions.remove(p);
        }
        for d in delta.put {
            m.decisions.insert((d.a.clone(), d.b.clone()), d);
        }
        if decided {
            m.classes = Classes::build(m.decisions.values());
        }
        for e in delta.held_delete {
            m.held.remove(&e);
        }
        m.held.extend(delta.held_put);
        for e in delta.same_delete {
            m.same_edges.remove(&e);
        }
        m.same_edges.extend(delta.same_put);
        m.ids.extend(delta.ids);
        for p in &pend.new_docs {
            if m.classes.class(&p.key).is_some() {
                m.ids.insert(p.key.clone(), p.id);
            }
        }
        if decided {
            let Mem { ids, classes, .. } = &mut *m;
            ids.retain(|k, _| classes.class(k).is_some());
        }
    }
}

impl SideIndex for Decisions {
    fn name(&self) -> &'static str {
        "decisions"
    }

    fn column_families(&self) -> Vec<String> {
        vec![CF_DECISIONS.to_string()]
    }

    /// Every entry, and the live document of every decided key (a read-only open of a database
    /// made before the decisions has none).
    fn load(&self, o: &Opening<'_>) -> Result<()> {
        let Some(cf) = o.rocks.cf_handle(CF_DECISIONS) else { return Ok(()) };
        let mut m = Mem::default();
        for item in o.rocks.iterator_cf(cf, IteratorMode::Start) {
            let (k, v) = item.map_err(|e| Error::rocks("scan decisions", o.rocks_path, e))?;
            match record::decode(o.rocks_path, &k, &v)? {
                Entry::Decision(d) => {
                    m.decisions.insert((d.a.clone(), d.b.clone()), d);
                }
                Entry::Held(e, p) => {
                    m.held.insert(e, p);
                }
                Entry::SameEdge(e) => {
                    m.same_edges.insert(e);
                }
            }
        }
        m.classes = Classes::build(m.decisions.values());
        let keys_cf = cfs::cf(o.rocks, o.rocks_path, CF_KEYS)?;
        let decided: BTreeSet<&String> = m.decisions.keys().flat_map(|(a, b)| [a, b]).collect();
        let mut ids = HashMap::new();
        for k in decided {
            let v = o
                .rocks
                .get_cf(keys_cf, k.as_bytes())
                .map_err(|e| Error::rocks("read key", o.rocks_path, e))?;
            if let Some(id) = v.as_deref().and_then(crate::store::keys::decode_key_value) {
                if o.docs.contains_key(&id) {
                    ids.insert(k.clone(), id);
                }
            }
        }
        m.ids = ids;
        *self.mem.write() = m;
        Ok(())
    }

    fn batch(&self) -> Option<Box<dyn BatchPart + '_>> {
        Some(Box::new(self.part(Delta::default())))
    }

    fn check(&self, base: &Base, st: &State, records: &IntMap<u64, DocRecord>, rep: &mut CheckReport) -> Result<()> {
        self.check_entries(base, st, records, rep)
    }
}

/// The decisions' part of a batch: the plan of the document being decided (`on_decide` →
/// `on_place`) and the batch's changes (`write` completes them, `publish` applies them).
pub(super) struct DecisionsBatch<'a> {
    side: &'a Decisions,
    plan: Option<Plan>,
    delta: Delta,
}

impl Decisions {
    /// A batch part that starts with `delta` (a curator's decision made it).
    pub(super) fn part(&self, delta: Delta) -> DecisionsBatch<'_> {
        DecisionsBatch {
            side: self,
            plan: None,
            delta,
        }
    }
}

impl BatchPart for DecisionsBatch<'_> {
    /// A later link across a `distinct` decision is held under it in this commit (an undo of the
    /// decision makes it again).
    fn holds_link(&mut self, st: &State, pend: &Pending, a: u64, b: u64) -> bool {
        match self.side.blocking_link(st, pend, a, b) {
            Some(p) => {
                self.delta.held_put.push((lo_hi(a, b), p));
                true
            }
            None => false,
        }
    }

    /// The links and the withheld duplicates of a new document (nothing without decisions).
    fn on_decide(&mut self, d: &Deciding<'_>, add: &mut Additions) -> Result<()> {
        let mem = self.side.mem.read();
        if mem.decisions.is_empty() {
            return Ok(());
        }
        let (links, withheld) = Decisions::plan(&mem, d);
        add.links = links.clone();
        add.not_linked = withheld
            .iter()
            .filter_map(|(id, p)| {
                d.dups.iter().find(|h| h.id == *id).map(|h| NotLinked {
                    key: h.key.clone(),
                    id: h.id,
                    jaccard: h.jaccard,
                    blocked_by: vec![p.0.clone(), p.1.clone()],
                })
            })
            .collect();
        let verified: BTreeSet<u64> = d.dups.iter().map(|h| h.id).collect();
        self.plan = Some(Plan {
            same_links: links.into_iter().filter(|l| !verified.contains(l)).collect(),
            withheld,
        });
        Ok(())
    }

    fn on_place(&mut self, _d: &Deciding<'_>, id: u64) -> Result<()> {
        if let Some(plan) = self.plan.take() {
            let delta = &mut self.delta;
            delta.same_put.extend(plan.same_links.iter().map(|&l| lo_hi(id, l)));
            delta.held_put.extend(plan.withheld.into_iter().map(|(x, p)| (lo_hi(id, x), p)));
        }
        Ok(())
    }

    /// The batch's entries: its decisions, its held and same edges (those whose two documents
    /// are alive at its end), and the deleted documents' held and same edges removed.
    fn write(&mut self, db: &Base, st: &State, pend: &Pending, b: &mut WriteBatch) -> Result<()> {
        let delta = &mut self.delta;
        let mem = self.side.mem.read();
        if mem.decisions.is_empty() && delta.put.is_empty() && delta.delete.is_empty() && mem.held.is_empty() && mem.same_edges.is_empty() {
            return Ok(());
        }
        let new_ids: BTreeSet<u64> = pend.new_docs.iter().map(|p| p.id).collect();
        let alive = |id: u64| new_ids.contains(&id) || (st.docs.contains_key(&id) && !pend.deleted.contains(&id));
        delta.held_put.retain(|(e, _)| alive(e.0) && alive(e.1));
        delta.same_put.retain(|e| alive(e.0) && alive(e.1));
        if !pend.deleted.is_empty() {
            let dead = |e: (u64, u64)| pend.deleted.contains(&e.0) || pend.deleted.contains(&e.1);
            let held: Vec<(u64, u64)> = mem.held.keys().copied().filter(|e| dead(*e)).collect();
            let same: Vec<(u64, u64)> = mem.same_edges.iter().copied().filter(|e| dead(*e)).collect();
            delta.held_delete.extend(held);
            delta.same_delete.extend(same);
        }
        let cf = db.cf(CF_DECISIONS)?;
        for p in &delta.delete {
            b.delete_cf(cf, record::decision_key(p));
        }
        for d in &delta.put {
            b.put_cf(cf, record::decision_key(&(d.a.clone(), d.b.clone())), record::encode_decision(d));
        }
        for e in &delta.held_delete {
            b.delete_cf(cf, record::held_key(*e));
        }
        for (e, p) in &delta.held_put {
            b.put_cf(cf, record::held_key(*e), record::held_value(p));
        }
        for e in &delta.same_delete {
            b.delete_cf(cf, record::same_edge_key(*e));
        }
        for e in &delta.same_put {
            b.put_cf(cf, record::same_edge_key(*e), []);
        }
        Ok(())
    }

    fn publish(self: Box<Self>, _st: &mut State, pend: &Pending) -> Result<()> {
        self.side.apply(pend, self.delta);
        Ok(())
    }
}
