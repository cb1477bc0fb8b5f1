//! The decisions' API on [`Db`]: decide, undo, list, restore. Each change is one mutation under
//! the writer lock: the contradictions are refused before anything changes, then the groups the
//! change touches are regrouped under the decisions after it ([`model::group_under`]) and the
//! whole — decision entries, held and same edges, the edges and the regrouped records — is ONE
//! commit (`Db::commit`, one `WriteBatch`).

use std::collections::{BTreeMap, BTreeSet};

use super::model::{contradiction, group_under, key_pair, Classes, KeyPair, Node};
use super::{lo_hi, Decision, DecisionKind, Decisions, Delta, Mem};
use crate::db::handle::Db;
use crate::db::options::validate_key;
use crate::db::pending::{now_ms, Pending};
use crate::db::side::{Parts, SideIndex};
use crate::db::state::{State, Writer};
use crate::error::{Error, Result};

impl Db {
    /// The decisions side index (registered in every database).
    pub(super) fn decisions_side(&self) -> Result<&Decisions> {
        self.inner.sides.decisions.as_ref().ok_or_else(|| Error::InvalidOption {
            name: "decisions",
            message: "this handle has no decisions index".into(),
        })
    }

    /// Puts and deletes decisions and regroups what they touch: one mutation, one commit.
    fn change_decisions(&self, w: &mut Writer, put: Vec<Decision>, delete: Vec<KeyPair>) -> Result<()> {
        let side = self.decisions_side()?;
        let before: Mem = side.mem().clone();
        let mut after = before.decisions.clone();
        for p in &delete {
            after.remove(p);
        }
        for d in &put {
            let evidence = contradiction(&after, d);
            if !evidence.is_empty() {
                return Err(Error::Contradiction {
                    a: d.a.clone(),
                    b: d.b.clone(),
                    decision: d.decision.to_string(),
                    evidence: evidence.iter().filter_map(|p| after.get(p).cloned()).collect(),
                });
            }
            after.insert(key_pair(&d.a, &d.b), d.clone());
        }
        let classes = Classes::build(after.values());
        // The live documents of keys decided for the first time.
        let mut ids = Vec::new();
        for d in &put {
            for k in [&d.a, &d.b] {
                if !before.ids.contains_key(k) && !ids.iter().any(|(x, _): &(String, u64)| x == k) {
                    if let Some(id) = self.committed_id(k)? {
                        ids.push((k.clone(), id));
                    }
                }
            }
        }
        let live = |k: &String| before.ids.get(k).copied().or_else(|| ids.iter().find(|(x, _)| x == k).map(|p| p.1));
        // Regrouped: the groups of the pairs' documents and of the edges held by a changed pair.
        let changed: BTreeSet<KeyPair> = put.iter().map(|d| key_pair(&d.a, &d.b)).chain(delete.iter().cloned()).collect();
        let mut seeds: Vec<u64> = changed.iter().flat_map(|(a, b)| [live(a), live(b)]).flatten().collect();
        seeds.extend(
            before
                .held
                .iter()
                .filter(|(_, p)| changed.contains(*p))
                .flat_map(|(e, _)| [e.0, e.1]),
        );
        Self::mutation(w, "decide", |w| {
            let mut pend = Pending {
                side_changed: true,
                ..Pending::default()
            };
            let mut delta = Delta {
                put,
                delete,
                ids,
                ..Delta::default()
            };
            {
                let st = self.inner.state.read();
                regroup(&st, w, &mut pend, &before, &classes, &seeds, &mut delta);
            }
            let mut parts = Parts::begin(&self.inner.sides);
            parts.put(side.name(), Box::new(side.part(delta)));
            self.commit(w, pend, parts, Vec::new())
        })
    }
}

/// A curator's decisions about pairs of documents ([`Db::decisions`]): `same` and `distinct`,
/// undone, listed, restored, and the groups, group views and review queue under them.
#[derive(Clone, Copy, Debug)]
pub struct CuratorDecisions<'a> {
    pub(crate) db: &'a Db,
}

impl Db {
    /// The curator decisions' API ([`CuratorDecisions`]).
    pub fn decisions(&self) -> CuratorDecisions<'_> {
        CuratorDecisions { db: self }
    }
}

impl CuratorDecisions<'_> {
    /// Records a curator's decision about the documents with keys `a` and `b` (both stored): `same`
    /// links them whatever the scores say, `distinct` keeps them (and every document joined to
    /// either by `same` decisions) in different groups. The groups follow at once, in the same
    /// commit. A decision on a pair already decided replaces it. Refused with
    /// [`Error::Contradiction`] (nothing changes) when it contradicts the others.
    pub fn decide(&self, a: &str, b: &str, decision: DecisionKind, reason: Option<&str>, author: Option<&str>) -> Result<Decision> {
        let d = new_decision(a, b, decision, reason, author, now_ms())?;
        let mut w = self.db.lock_writer()?;
        for k in [a, b] {
            if self.db.committed_id(k)?.is_none() {
                return Err(Error::NoSuchDocument { key: k.to_string() });
            }
        }
        self.db.change_decisions(&mut w, vec![d.clone()], Vec::new())?;
        Ok(d)
    }

    /// Removes the decision about `a` and `b` (in either order); the groups follow at once: after
    /// a `distinct`, the links it held are made again (unless another decision holds them); after
    /// a `same`, the links only it made are removed. Returns the decision removed (`None`: there
    /// was none).
    pub fn undo(&self, a: &str, b: &str) -> Result<Option<Decision>> {
        let p = key_pair(a, b);
        let mut w = self.db.lock_writer()?;
        let Some(d) = self.db.decisions_side()?.mem().decisions.get(&p).cloned() else {
            return Ok(None);
        };
        self.db.change_decisions(&mut w, Vec::new(), vec![p])?;
        Ok(Some(d))
    }

    /// Every decision, by key pair.
    pub fn list(&self) -> Vec<Decision> {
        self.db
            .decisions_side()
            .map(|s| s.mem().decisions.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Restores decisions as listed by [`CuratorDecisions::list`] (an import): each in order, with its own
    /// time, author and reason, replacing a decision on the same pair; their keys need not be
    /// stored yet (a document inserted later follows them). One commit; refused whole with
    /// [`Error::Contradiction`] when one contradicts those before it.
    pub fn restore(&self, decisions: &[Decision]) -> Result<()> {
        let list = decisions
            .iter()
            .map(|d| new_decision(&d.a, &d.b, d.decision, d.reason.as_deref(), d.author.as_deref(), d.at_ms))
            .collect::<Result<Vec<_>>>()?;
        let mut w = self.db.lock_writer()?;
        self.db.change_decisions(&mut w, list, Vec::new())
    }
}

/// A decision's value, validated: two different valid keys (stored smaller first).
fn new_decision(a: &str, b: &str, decision: DecisionKind, reason: Option<&str>, author: Option<&str>, at_ms: u64) -> Result<Decision> {
    validate_key(a)?;
    validate_key(b)?;
    if a == b {
        return Err(Error::SameDocument { key: a.to_string() });
    }
    let (a, b) = key_pair(a, b);
    Ok(Decision {
        a,
        b,
        decision,
        at_ms,
        author: author.filter(|s| !s.is_empty()).map(str::to_string),
        reason: reason.filter(|s| !s.is_empty()).map(str::to_string),
    })
}

/// Regroups the groups of `seeds` under `classes` (the decisions after the change): the edges,
/// held edges and same edges among their documents recomputed by [`group_under`] (the verified
/// edges, accepted and held, in the order of their later document; a class's documents linked
/// pairwise), and every difference recorded in `pend` (edges, groups) and `delta` (held and same
/// edges).
fn regroup(st: &State, w: &mut Writer, pend: &mut Pending, before: &Mem, classes: &Classes, seeds: &[u64], delta: &mut Delta) {
    let set = seed_groups(st, w, pend, seeds);
    if set.is_empty() {
        return;
    }
    let nodes: Vec<Node> = set
        .iter()
        .map(|&id| (id, st.docs.get(&id).and_then(|m| classes.class(&m.key))))
        .collect();
    let inside = |e: (u64, u64)| set.contains(&e.0) && set.contains(&e.1);
    let mut accepted: BTreeSet<(u64, u64)> = BTreeSet::new();
    for &x in &set {
        for &y in w.edges.get(&x).map(Vec::as_slice).unwrap_or(&[]) {
            if set.contains(&y) {
                accepted.insert(lo_hi(x, y));
            }
        }
    }
    let held_before: BTreeMap<(u64, u64), KeyPair> = before
        .held
        .iter()
        .filter(|(e, _)| inside(**e))
        .map(|(e, p)| (*e, p.clone()))
        .collect();
    let same_before: BTreeSet<(u64, u64)> = before.same_edges.iter().copied().filter(|e| inside(*e)).collect();
    let verified: BTreeSet<(u64, u64)> = accepted
        .difference(&same_before)
        .copied()
        .chain(held_before.keys().copied())
        .collect();
    let mut soft: Vec<(u64, u64)> = verified.iter().copied().collect();
    soft.sort_unstable_by_key(|&(lo, hi)| (hi, lo));
    let out = group_under(classes, &nodes, &soft);
    let must = class_links(&nodes);
    let final_edges: BTreeSet<(u64, u64)> = out.taken.iter().map(|&(a, b)| lo_hi(a, b)).chain(must.iter().copied()).collect();
    relink(w, pend, &accepted, &final_edges);
    let held_after: BTreeMap<(u64, u64), KeyPair> = out.held.into_iter().map(|((a, b), p)| (lo_hi(a, b), p)).collect();
    for (e, p) in &held_before {
        if held_after.get(e) != Some(p) {
            delta.held_delete.push(*e);
        }
    }
    for (e, p) in &held_after {
        if held_before.get(e) != Some(p) {
            delta.held_put.push((*e, p.clone()));
        }
    }
    let same_after: BTreeSet<(u64, u64)> = must.difference(&verified).copied().collect();
    delta.same_delete.extend(same_before.difference(&same_after));
    delta.same_put.extend(same_after.difference(&same_before));
    replace_groups(st, w, pend, &set, out.groups);
}

/// The live documents of the groups of `seeds` (a seed with no group of several: itself).
fn seed_groups(st: &State, w: &Writer, pend: &Pending, seeds: &[u64]) -> BTreeSet<u64> {
    let mut set: BTreeSet<u64> = BTreeSet::new();
    for &x in seeds {
        if !st.docs.contains_key(&x) {
            continue;
        }
        let g = pend.group_of(st, x);
        match w.members.get(&g) {
            Some(m) => set.extend(m.iter().copied()),
            None => {
                set.insert(x);
            }
        }
    }
    set
}

/// A class's documents, linked pairwise (so that removing one keeps the others together).
fn class_links(nodes: &[Node]) -> BTreeSet<(u64, u64)> {
    let mut by_class: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
    for (id, c) in nodes.iter().filter_map(|&(id, c)| c.map(|c| (id, c))) {
        by_class.entry(c).or_default().push(id);
    }
    let mut must: BTreeSet<(u64, u64)> = BTreeSet::new();
    for m in by_class.values() {
        for (i, &x) in m.iter().enumerate() {
            for &y in &m[i + 1..] {
                must.insert(lo_hi(x, y));
            }
        }
    }
    must
}

/// Removes the edges of `accepted` not in `final_edges` and adds those of `final_edges` not in `accepted`, in the writer and in `pend`.
fn relink(w: &mut Writer, pend: &mut Pending, accepted: &BTreeSet<(u64, u64)>, final_edges: &BTreeSet<(u64, u64)>) {
    for &(x, y) in accepted.difference(final_edges) {
        for (a, b) in [(x, y), (y, x)] {
            if let Some(v) = w.edges.get_mut(&a) {
                v.retain(|&z| z != b);
                if v.is_empty() {
                    w.edges.remove(&a);
                }
            }
        }
        pend.edges_removed.push((x, y));
    }
    for &(x, y) in final_edges.difference(accepted) {
        w.edges.entry(x).or_default().push(y);
        w.edges.entry(y).or_default().push(x);
        pend.edges_added.push((x, y));
    }
}

/// The groups of `set` dropped and `groups` set in their place (id = smallest member).
fn replace_groups(st: &State, w: &mut Writer, pend: &mut Pending, set: &BTreeSet<u64>, groups: Vec<Vec<u64>>) {
    for &id in set {
        let g = pend.group_of(st, id);
        w.members.remove(&g);
        pend.touched_groups.insert(g);
    }
    for g in groups {
        let gid = g[0];
        for &m in &g {
            if pend.group_of(st, m) != gid {
                pend.set_group(m, gid);
            }
        }
        pend.touched_groups.insert(gid);
        if g.len() > 1 {
            w.members.insert(gid, g);
        }
    }
}
