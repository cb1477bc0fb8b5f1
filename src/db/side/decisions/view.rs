//! What a curator reviews: a group with its members, every edge with its channel and scores, and
//! the decisions about its members ([`CuratorDecisions::group`]); the groups by size or weakest edge and
//! the queue of undecided pairs within a score window ([`CuratorDecisions::review`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::model::key_pair;
use super::ops::CuratorDecisions;
use super::{lo_hi, Decision, DecisionKind, Mem};
use crate::db::handle::Db;
use crate::db::state::{State, Writer};
use crate::db::types::GroupInfo;
use crate::error::{Error, Result};
use crate::fingerprint::similarity::containment;

/// Where an edge of a group comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum EdgeChannel {
    /// A verified text duplicate (Jaccard at least the database's threshold).
    Text,
    /// A link of the semantic channel (`--groups union`), below the Jaccard threshold.
    Semantic,
    /// Made by a curator's `same` decision alone.
    Same,
    /// A verified duplicate not linked: a `distinct` decision holds it (`blocked_by`).
    Held,
}

/// A member of a reviewed group.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GroupMember {
    /// Its key.
    pub key: String,
    /// Its doc id.
    pub id: u64,
    /// When it was stored (ms since the Unix epoch).
    pub inserted_at_ms: u64,
    /// Its metadata (the JSON text given at insert).
    pub meta: Option<String>,
    /// Its number of shingles.
    pub shingles: u32,
}

/// One edge of a reviewed group (or a held link from one of its members), with its scores.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GroupEdge {
    /// The key of one end.
    pub a: String,
    /// The key of the other end.
    pub b: String,
    /// Where the edge comes from.
    pub channel: EdgeChannel,
    /// Exact Jaccard of the two shingle sets.
    pub jaccard: f64,
    /// Containment of `a` in `b`, |A ∩ B| / |A|.
    pub containment: f64,
    /// Containment of `b` in `a`, |A ∩ B| / |B|.
    pub reverse_containment: f64,
    /// The cosine of the two embeddings (absent: no semantic channel's vectors for the pair).
    pub cosine: Option<f32>,
    /// The curator's decision about this pair, if any.
    pub decision: Option<DecisionKind>,
    /// For a held edge: the `distinct` decision that holds it.
    pub blocked_by: Option<Vec<String>>,
}

/// A group with every edge and the decisions about its members.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GroupView {
    /// The group.
    pub group: GroupInfo,
    /// Its members, by doc id.
    pub members: Vec<GroupMember>,
    /// Its edges, and the held links from its members.
    pub edges: Vec<GroupEdge>,
    /// The decisions naming one of its members' keys.
    pub decisions: Vec<Decision>,
}

/// How [`CuratorDecisions::review`] orders the groups.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ReviewOrder {
    /// Largest first.
    #[default]
    Size,
    /// Weakest edge (lowest Jaccard) first.
    Weakest,
}

/// What [`CuratorDecisions::review`] lists.
#[derive(Clone, Debug, PartialEq)]
pub struct ReviewOptions {
    /// The order of the groups.
    pub order: ReviewOrder,
    /// The score window of the queue: pairs with `min_jaccard <= jaccard <= max_jaccard`.
    pub min_jaccard: f64,
    /// The window's upper end.
    pub max_jaccard: f64,
    /// Whether decided pairs stay in the queue.
    pub decided: bool,
    /// At most this many groups and this many pairs.
    pub limit: usize,
}

impl Default for ReviewOptions {
    fn default() -> Self {
        ReviewOptions {
            order: ReviewOrder::Size,
            min_jaccard: 0.0,
            max_jaccard: 1.0,
            decided: false,
            limit: 100,
        }
    }
}

/// One group in [`ReviewAnswer::groups`].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GroupSummary {
    /// The group.
    pub group: GroupInfo,
    /// The lowest Jaccard of its edges (absent: its edges are `same` decisions only).
    pub weakest: Option<f64>,
}

/// The review's lists.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReviewAnswer {
    /// Groups of two or more, in the order asked.
    pub groups: Vec<GroupSummary>,
    /// The queue: edges and held links within the score window, weakest first (decided ones only
    /// when asked).
    pub pairs: Vec<GroupEdge>,
}

/// Scores edges, each document's shingle set read once.
struct Scorer<'a> {
    db: &'a Db,
    st: &'a State,
    mem: &'a Mem,
    sets: HashMap<u64, Vec<u32>>,
}

impl Scorer<'_> {
    fn set(&mut self, id: u64) -> Result<&[u32]> {
        if !self.sets.contains_key(&id) {
            let m = self.st.docs.get(&id).ok_or_else(|| {
                Error::corrupt(
                    &self.db.inner.rocks_path,
                    Some(id),
                    "an edge names a document that is not live; run `fpdb check`",
                )
            })?;
            let set = self.st.segs.read(m.loc, id)?.into_owned();
            self.sets.insert(id, set);
        }
        Ok(&self.sets[&id])
    }

    fn edge(&mut self, x: u64, y: u64) -> Result<GroupEdge> {
        let (x, y) = (x.min(y), x.max(y));
        let c = {
            let a = self.set(x)?.to_vec();
            containment(&a, self.set(y)?)
        };
        let key = |id: u64| self.st.docs.get(&id).map(|m| m.key.to_string()).unwrap_or_default();
        let (a, b) = (key(x), key(y));
        let held = self.mem.held.get(&lo_hi(x, y));
        let channel = if held.is_some() {
            EdgeChannel::Held
        } else if self.mem.same_edges.contains(&lo_hi(x, y)) {
            EdgeChannel::Same
        } else if c.jaccard >= self.db.inner.config.min_jaccard {
            EdgeChannel::Text
        } else {
            EdgeChannel::Semantic
        };
        let decision = self.mem.decisions.get(&key_pair(&a, &b)).map(|d| d.decision);
        Ok(GroupEdge {
            a,
            b,
            channel,
            jaccard: c.jaccard,
            containment: c.a_in_b,
            reverse_containment: c.b_in_a,
            cosine: self.db.semantic_cosine(x, y),
            decision,
            blocked_by: held.map(|p| vec![p.0.clone(), p.1.clone()]),
        })
    }
}

/// The edges (`edges` and held) with an end among `ids`, each once, ordered.
fn edges_of(w: &Writer, mem: &Mem, ids: &BTreeSet<u64>) -> Vec<(u64, u64)> {
    let mut out: BTreeSet<(u64, u64)> = BTreeSet::new();
    for &x in ids {
        for &y in w.edges.get(&x).map(Vec::as_slice).unwrap_or(&[]) {
            out.insert(lo_hi(x, y));
        }
    }
    for e in mem.held.keys() {
        if ids.contains(&e.0) || ids.contains(&e.1) {
            out.insert(*e);
        }
    }
    out.into_iter().collect()
}

impl CuratorDecisions<'_> {
    /// The group of the document with key `key`: its members, every edge with its channel and
    /// scores (and the held links from its members), and the decisions about its members.
    /// `None`: no document has the key.
    pub fn group(&self, key: &str) -> Result<Option<GroupView>> {
        let side = self.db.decisions_side()?;
        // The writer lock keeps the edges, RocksDB and the published state in step.
        let w = self.db.inner.writer.lock();
        let st = self.db.inner.state.read();
        st.whole()?;
        let Some(id) = self.db.committed_id(key)? else { return Ok(None) };
        let Some(m) = st.docs.get(&id) else { return Ok(None) };
        let gid = m.group;
        let ids: BTreeSet<u64> = st.members.get(&gid).cloned().unwrap_or_else(|| vec![id]).into_iter().collect();
        let mem = side.mem();
        let mut members = Vec::with_capacity(ids.len());
        for &i in &ids {
            let Some(r) = self.db.read_record(i)? else { continue };
            members.push(GroupMember {
                key: r.key,
                id: i,
                inserted_at_ms: r.inserted_at_ms,
                meta: r.meta,
                shingles: r.count,
            });
        }
        let keys: BTreeSet<&str> = members.iter().map(|m| m.key.as_str()).collect();
        let mut scorer = Scorer {
            db: self.db,
            st: &st,
            mem: &mem,
            sets: HashMap::new(),
        };
        let edges = edges_of(&w, &mem, &ids)
            .into_iter()
            .map(|(x, y)| scorer.edge(x, y))
            .collect::<Result<Vec<_>>>()?;
        let decisions = mem
            .decisions
            .values()
            .filter(|d| keys.contains(d.a.as_str()) || keys.contains(d.b.as_str()))
            .cloned()
            .collect();
        Ok(Some(GroupView {
            group: self.db.group_info(&st, gid)?,
            members,
            edges,
            decisions,
        }))
    }

    /// The groups of two or more (by size or weakest edge) and the queue of pairs within the
    /// score window (weakest first; decided pairs left out unless asked for). Reads every edge's
    /// two shingle sets (each document's once).
    pub fn review(&self, opts: &ReviewOptions) -> Result<ReviewAnswer> {
        let side = self.db.decisions_side()?;
        let w = self.db.inner.writer.lock();
        let st = self.db.inner.state.read();
        st.whole()?;
        let mem = side.mem();
        let mut scorer = Scorer {
            db: self.db,
            st: &st,
            mem: &mem,
            sets: HashMap::new(),
        };
        let all: BTreeSet<u64> = st
            .members
            .values()
            .flatten()
            .copied()
            .chain(mem.held.keys().flat_map(|e| [e.0, e.1]))
            .collect();
        let mut weakest: BTreeMap<u64, f64> = BTreeMap::new();
        let mut pairs = Vec::new();
        for (x, y) in edges_of(&w, &mem, &all) {
            if !st.docs.contains_key(&x) || !st.docs.contains_key(&y) {
                continue;
            }
            let e = scorer.edge(x, y)?;
            if e.channel != EdgeChannel::Held && e.channel != EdgeChannel::Same {
                let g = st.docs[&x].group;
                let v = weakest.entry(g).or_insert(f64::INFINITY);
                *v = v.min(e.jaccard);
            }
            if (opts.decided || e.decision.is_none()) && e.jaccard >= opts.min_jaccard && e.jaccard <= opts.max_jaccard {
                pairs.push(e);
            }
        }
        pairs.sort_by(|p, q| p.jaccard.total_cmp(&q.jaccard).then_with(|| (&p.a, &p.b).cmp(&(&q.a, &q.b))));
        pairs.truncate(opts.limit);
        let mut groups = st
            .members
            .keys()
            .map(|&g| {
                Ok(GroupSummary {
                    group: self.db.group_info(&st, g)?,
                    weakest: weakest.get(&g).copied(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        match opts.order {
            ReviewOrder::Size => groups.sort_by(|p, q| q.group.size.cmp(&p.group.size).then(p.group.id.cmp(&q.group.id))),
            ReviewOrder::Weakest => groups.sort_by(|p, q| {
                let (a, b) = (p.weakest.unwrap_or(f64::INFINITY), q.weakest.unwrap_or(f64::INFINITY));
                a.total_cmp(&b).then(p.group.id.cmp(&q.group.id))
            }),
        }
        groups.truncate(opts.limit);
        Ok(ReviewAnswer { groups, pairs })
    }
}
