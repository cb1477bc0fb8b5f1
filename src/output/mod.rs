//! The JSON shapes of results, defined once. The CLI's `--json` lines, the HTTP
//! service's bodies (and its OpenAPI schemas, feature `openapi`) and the Python binding's
//! `to_dict()` all serialize these; no front end restates a field.
//!
//! The result types carry their own shape (serde derives beside them): [`Hit`], [`GroupInfo`],
//! [`QueryAnswer`](crate::QueryAnswer), [`InsertOutcome`] ([`OutcomeShape`], below), [`Stats`],
//! [`ContainmentStats`], [`Fault`](crate::Fault), [`CompactStats`](crate::CompactStats),
//! [`DistRow`](crate::DistRow). This module holds the shapes that join a result with what the
//! front end looks up (keys of pair members, a group's members) and the views that leave fields
//! out ([`View`]: the HTTP service's documented hit, a duplicate check's bounds).
//!
//! **A new field** of a result goes into its type (with its serde attributes; an insert's outcome:
//! into [`OutcomeShape`] too): every shape and view built on the type, and the OpenAPI schema,
//! follow. A view lists only what it leaves out.

use serde::ser::{Error as _, Serializer};
use serde::{Deserialize, Serialize};

use crate::db::{ContainPair, ContainmentStats, Document, GroupInfo, Hit, InsertOutcome, NotLinked, Stats};
use crate::error::Error;
use crate::Pair;

/// An insert's outcome: the fate of a stored (or skipped) document, sent once it is durable.
//
// The one list of an outcome's fields, its hits as `H`: `&Hit` in `InsertOutcome`'s own shape
// (Python's `InsertOutcome.to_dict()`; the CLI's `OutcomeLine` is it with the group flat),
// `HttpHit` in the HTTP service's (`HttpOutcome`). (A `//` comment: the `///` text above is the
// OpenAPI description.)
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = PutResponse))]
pub struct OutcomeShape<'a, H> {
    /// Its key.
    key: &'a str,
    /// Its doc id (absent when not stored).
    id: Option<u64>,
    /// Whether it was stored (`dedup=skip` does not store near-duplicates).
    stored: bool,
    /// Doc id of the earlier document with the same key it replaced.
    replaced: Option<u64>,
    /// Verified near-duplicates and exact metadata matches already stored.
    duplicates: Vec<H>,
    /// Its group (absent when not stored).
    group: Option<GroupInfo>,
    /// Containment relations, when asked for (never over HTTP: the service does not ask, and its
    /// schema leaves the field out).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    containment: Option<Vec<H>>,
    /// Verified near-duplicates it was not linked to, each with the curator's `distinct` decision
    /// that held the link (absent when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    not_linked: Vec<NotLinked>,
}

impl<'a, H: From<&'a Hit>> OutcomeShape<'a, H> {
    /// The shape of `o`, with (`relations`) or without its containment relations.
    fn of(o: &'a InsertOutcome, relations: bool) -> Self {
        OutcomeShape {
            key: &o.key,
            id: o.id,
            stored: o.id.is_some(),
            replaced: o.replaced,
            duplicates: o.duplicates.iter().map(H::from).collect(),
            group: o.group.clone(),
            containment: relations.then(|| o.containment.iter().map(H::from).collect()),
            not_linked: o.not_linked.clone(),
        }
    }
}

/// An insert's outcome: its group nested (`{"id","canonical","size"}` or null), `stored`, the
/// verified duplicates and the containment relations.
impl Serialize for InsertOutcome {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        OutcomeShape::<&Hit>::of(self, true).serialize(s)
    }
}

/// An insert's outcome as the HTTP service writes it (`PUT /v1/documents/{key}`, each line of
/// `POST /v1/documents`): [`HttpHit`]s, no containment relations.
pub type HttpOutcome<'a> = OutcomeShape<'a, HttpHit<'a>>;

impl<'a> From<&'a InsertOutcome> for HttpOutcome<'a> {
    fn from(o: &'a InsertOutcome) -> Self {
        OutcomeShape::of(o, false)
    }
}

/// The line `fpdb --json insert` / `ingest` prints for an outcome: [`InsertOutcome`]'s shape with
/// the group flat (`group` its id, `canonical`, `group_size`; null when not stored).
pub struct OutcomeLine<'a>(pub &'a InsertOutcome);

impl<'a> From<&'a InsertOutcome> for OutcomeLine<'a> {
    fn from(o: &'a InsertOutcome) -> Self {
        OutcomeLine(o)
    }
}

impl OutcomeLine<'_> {
    /// The line as a JSON value (what the CLI prints).
    pub fn to_value(&self) -> serde_json::Result<serde_json::Value> {
        let mut v = serde_json::to_value(self.0)?;
        if let Some(m) = v.as_object_mut() {
            let g = m.remove("group").unwrap_or_default();
            m.insert("group".into(), g["id"].clone());
            m.insert("canonical".into(), g["canonical"].clone());
            m.insert("group_size".into(), g["size"].clone());
        }
        Ok(v)
    }
}

impl Serialize for OutcomeLine<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().map_err(S::Error::custom)?.serialize(s)
    }
}

/// The counters with the containment index's (`fpdb --json stats`, Python's `Stats.to_dict()`):
/// [`Stats`]'s fields and `containment` (an object, or null without the index).
#[derive(Serialize)]
pub struct StatsLine<'a> {
    #[serde(flatten)]
    stats: &'a Stats,
    containment: Option<&'a ContainmentStats>,
}

impl<'a> StatsLine<'a> {
    /// The shape of `stats` and `containment`.
    pub fn new(stats: &'a Stats, containment: Option<&'a ContainmentStats>) -> Self {
        StatsLine { stats, containment }
    }
}

/// A stored document with its group's member keys (`fpdb --json get`, Python's
/// `Document.to_dict()`); `meta` is the stored JSON parsed (null when absent or not JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DocumentLine {
    /// Key.
    pub key: String,
    /// Doc id.
    pub id: u64,
    /// SimHash.
    pub simhash: u64,
    /// Number of shingles.
    pub shingles: u32,
    /// Group id.
    pub group: u64,
    /// Key of the group's canonical member.
    pub canonical: String,
    /// The group's member keys, by doc id.
    pub group_members: Vec<String>,
    /// Insertion time, ms since the Unix epoch.
    pub inserted_at_ms: u64,
    /// The stored metadata.
    pub meta: serde_json::Value,
    /// Title.
    pub title: Option<String>,
    /// Year.
    pub year: Option<i32>,
    /// DOI as given.
    pub doi: Option<String>,
}

impl DocumentLine {
    /// `doc` with its group's members (`Db::group_members`).
    pub fn new(doc: &Document, members: &[(u64, String)]) -> Self {
        let r = &doc.record;
        DocumentLine {
            key: r.key.clone(),
            id: doc.id,
            simhash: r.simhash,
            shingles: r.count,
            group: doc.group.id,
            canonical: doc.group.canonical.clone(),
            group_members: members.iter().map(|m| m.1.clone()).collect(),
            inserted_at_ms: r.inserted_at_ms,
            meta: r.meta.as_deref().and_then(|m| serde_json::from_str(m).ok()).unwrap_or_default(),
            title: r.biblio.title.clone(),
            year: r.biblio.year,
            doi: r.biblio.doi.clone(),
        }
    }
}

/// One pair of `pairs` with its members' keys (`fpdb --json pairs`, Python's `Pair.to_dict()`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairLine {
    /// Key of the smaller doc id.
    pub a: String,
    /// Key of the larger doc id.
    pub b: String,
    /// Smaller doc id.
    pub a_id: u64,
    /// Larger doc id.
    pub b_id: u64,
    /// Hamming distance (a method's distance under another method).
    pub hamming: u32,
    /// Exact Jaccard, when verified.
    pub jaccard: Option<f64>,
}

impl PairLine {
    /// `p` with the keys `key` gives its ids.
    pub fn new(p: &Pair, key: impl Fn(u64) -> String) -> Self {
        PairLine {
            a: key(p.a),
            b: key(p.b),
            a_id: p.a,
            b_id: p.b,
            hamming: p.hamming,
            jaccard: p.jaccard,
        }
    }
}

/// One group of `pairs --groups` (`fpdb --json pairs --groups`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupLine {
    /// Group id: the smallest doc id of the component.
    pub group: u64,
    /// Its key.
    pub canonical: String,
    /// Members.
    pub size: usize,
    /// Member keys, by doc id.
    pub members: Vec<String>,
}

/// One containment pair with its members' keys and the direction at the threshold asked
/// (`fpdb --json pairs --min-containment`, Python's `ContainPair.to_dict()`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContainPairLine {
    /// Key of the smaller doc id.
    pub a: String,
    /// Key of the larger doc id.
    pub b: String,
    /// Smaller doc id.
    pub a_id: u64,
    /// Larger doc id.
    pub b_id: u64,
    /// `a<b` (a inside b), `b<a`, or `both`.
    pub direction: String,
    /// |A ∩ B| / |A|.
    pub a_in_b: f64,
    /// |A ∩ B| / |B|.
    pub b_in_a: f64,
    /// Exact Jaccard.
    pub jaccard: f64,
    /// |A ∩ B|.
    pub shared: u32,
}

impl ContainPairLine {
    /// `p` at threshold `c`, with the keys `key` gives its ids.
    pub fn new(p: &ContainPair, c: f64, key: impl Fn(u64) -> String) -> Self {
        let direction = match (p.a_in_b >= c, p.b_in_a >= c) {
            (true, true) => "both",
            (true, false) => "a<b",
            _ => "b<a",
        };
        ContainPairLine {
            a: key(p.a),
            b: key(p.b),
            a_id: p.a,
            b_id: p.b,
            direction: direction.into(),
            a_in_b: p.a_in_b,
            b_in_a: p.b_in_a,
            jaccard: p.jaccard,
            shared: p.shared,
        }
    }
}

/// One document's lookup of `fpdb --json query --jsonl`: its position, key and hits.
#[derive(Serialize)]
pub struct QueryLine<'a> {
    /// 0-based position in the input.
    pub seq: u64,
    /// The document's key.
    pub key: &'a str,
    /// Its hits, best first.
    pub hits: &'a [Hit],
}

/// A rejected input item (`ingest`, `query --jsonl`): its position, origin and error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rejection {
    /// 0-based position in the input.
    pub seq: u64,
    /// Where it came from (file and line, or the directory entry).
    pub origin: String,
    /// Why it was rejected.
    pub error: String,
}

/// An error's evidence by name, beside its message: `{"op", "path", "errno"}` for an I/O error,
/// `{"path", "field", "expected", "found"}` for a spec mismatch, ... (paths as text). The Python
/// exceptions carry these as attributes. `Panicked` and `Injected` have none here (their text is
/// the message); `Semantic` has its variant's (`semantic_fields`).
pub struct ErrorFields<'a>(pub &'a Error);

impl Serialize for ErrorFields<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        let path = |p: &std::path::Path| p.display().to_string();
        match self.0 {
            Error::Io { op, path: p, source } => {
                m.serialize_entry("op", op)?;
                m.serialize_entry("path", &path(p))?;
                m.serialize_entry("errno", &source.raw_os_error())?;
            }
            Error::Rocks {
                op,
                path: p,
                kind,
                message,
            } => {
                m.serialize_entry("op", op)?;
                m.serialize_entry("path", &path(p))?;
                m.serialize_entry("kind", &kind.to_string())?;
                m.serialize_entry("message", message)?;
            }
            Error::Locked { path: p } | Error::NotFound { path: p } | Error::AlreadyExists { path: p } | Error::ReadOnly { path: p } => {
                m.serialize_entry("path", &path(p))?;
            }
            Error::SpecMismatch {
                path: p,
                field,
                expected,
                found,
            } => {
                m.serialize_entry("path", &path(p))?;
                m.serialize_entry("field", field)?;
                m.serialize_entry("expected", expected)?;
                m.serialize_entry("found", found)?;
            }
            Error::Version {
                what,
                path: p,
                expected,
                found,
            } => {
                m.serialize_entry("what", what)?;
                m.serialize_entry("path", &path(p))?;
                m.serialize_entry("expected", expected)?;
                m.serialize_entry("found", found)?;
            }
            Error::Corruption { path: p, doc, what } => {
                m.serialize_entry("path", &path(p))?;
                m.serialize_entry("doc", doc)?;
                m.serialize_entry("what", what)?;
            }
            Error::InvalidOption { name, message } => {
                m.serialize_entry("option", name)?;
                m.serialize_entry("message", message)?;
            }
            Error::InvalidInput { key, message } => {
                m.serialize_entry("key", key)?;
                m.serialize_entry("message", message)?;
            }
            Error::NoSuchDocument { key } | Error::SameDocument { key } => m.serialize_entry("key", key)?,
            Error::Poisoned { cause } => m.serialize_entry("cause", cause)?,
            Error::Contradiction { a, b, decision, evidence } => {
                m.serialize_entry("a", a)?;
                m.serialize_entry("b", b)?;
                m.serialize_entry("decision", decision)?;
                m.serialize_entry("evidence", evidence)?;
            }
            Error::Panicked { .. } | Error::Injected(_) => {}
            #[cfg(feature = "semantic")]
            Error::Semantic(e) => semantic_fields(&mut m, e)?,
        }
        m.end()
    }
}

/// The semantic channel's evidence, by the names of the other errors where they mean the same
/// (`path`, `op`, `message`, `errno`, `option`, `what`, `doc`, `cause`; a spec mismatch's
/// `expected` is the value given now and `found` the stored one, as [`Error::SpecMismatch`]'s).
#[cfg(feature = "semantic")]
fn semantic_fields<M: serde::ser::SerializeMap>(m: &mut M, e: &crate::semantic::SemanticError) -> Result<(), M::Error> {
    use crate::semantic::SemanticError as S;
    let path = |p: &std::path::Path| p.display().to_string();
    match e {
        S::ModelMissing { dir, missing } => {
            m.serialize_entry("path", &path(dir))?;
            m.serialize_entry("missing", &path(missing))?;
        }
        S::ModelInvalid { path: p, message } => {
            m.serialize_entry("path", &path(p))?;
            m.serialize_entry("message", message)?;
        }
        S::Inference { op, message, batch } => {
            m.serialize_entry("op", op)?;
            m.serialize_entry("message", message)?;
            m.serialize_entry("batch", batch)?;
        }
        S::SpecMismatch { field, stored, given } => {
            m.serialize_entry("field", field)?;
            m.serialize_entry("expected", given)?;
            m.serialize_entry("found", stored)?;
        }
        S::IndexerStopped { cause } => m.serialize_entry("cause", cause)?,
        S::WaitTimeout { target, cursor, waited_ms } => {
            m.serialize_entry("target", target)?;
            m.serialize_entry("cursor", cursor)?;
            m.serialize_entry("waited_ms", waited_ms)?;
        }
    }
    Ok(())
}

mod view;

pub use view::{AnswerBounds, AnswerBoundsFields, HttpHit, HttpHitFields, HttpStats, HttpStatsFields, Omit, View};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::similarity::MethodScore;
    use crate::{MatchKind, QueryAnswer};

    fn hit() -> Hit {
        Hit {
            key: "a".into(),
            id: 3,
            hamming: 2,
            jaccard: Some(0.5),
            shared: Some(7),
            containment: Some(0.25),
            reverse_containment: None,
            matched: MatchKind::TitleYear,
            score: MethodScore::Hamming(2),
            channels: vec![crate::Channel::Text],
            cosine: None,
        }
    }

    #[test]
    fn a_view_leaves_out_its_fields_and_keeps_the_order() {
        let h = hit();
        assert_eq!(
            serde_json::to_string(&h).unwrap(),
            r#"{"key":"a","id":3,"hamming":2,"jaccard":0.5,"shared":7,"containment":0.25,"reverse_containment":null,"match":"title_year","score":{"hamming":2},"channels":["text"],"cosine":null}"#
        );
        assert_eq!(
            serde_json::to_string(&HttpHit::of(&h)).unwrap(),
            r#"{"key":"a","id":3,"hamming":2,"jaccard":0.5,"shared":7,"match":"title_year","channels":["text"],"cosine":null}"#
        );
    }

    #[test]
    fn a_client_reads_back_what_it_was_sent() {
        let h = hit();
        assert_eq!(serde_json::from_str::<Hit>(&serde_json::to_string(&h).unwrap()).unwrap(), h);
        let a = QueryAnswer {
            hits: vec![h],
            truncated: false,
            candidates: 1,
            semantic_pending: 0,
        };
        assert_eq!(serde_json::from_value::<QueryAnswer>(serde_json::to_value(&a).unwrap()).unwrap(), a);
        let lexicons = MethodScore::Lexicons(vec![Some(3), None]);
        let text = serde_json::to_string(&lexicons).unwrap();
        assert_eq!(text, r#"{"lexicons":[3,null]}"#);
        assert_eq!(serde_json::from_str::<MethodScore>(&text).unwrap(), lexicons);
    }

    #[test]
    fn an_error_s_fields_are_its_evidence_by_name() {
        let e = Error::SpecMismatch {
            path: "/db".into(),
            field: "k",
            expected: "3".into(),
            found: "5".into(),
        };
        assert_eq!(
            serde_json::to_value(ErrorFields(&e)).unwrap(),
            serde_json::json!({"path": "/db", "field": "k", "expected": "3", "found": "5"})
        );
        let e = Error::io("read", "/db/x", std::io::Error::from_raw_os_error(28));
        assert_eq!(
            serde_json::to_value(ErrorFields(&e)).unwrap(),
            serde_json::json!({"op": "read", "path": "/db/x", "errno": 28})
        );
        let e = Error::InvalidOption {
            name: "limit",
            message: "too big".into(),
        };
        assert_eq!(
            serde_json::to_value(ErrorFields(&e)).unwrap(),
            serde_json::json!({"option": "limit", "message": "too big"})
        );
    }

    #[cfg(feature = "semantic")]
    #[test]
    fn a_semantic_error_s_fields_are_its_evidence_by_name() {
        use crate::semantic::SemanticError as S;
        let e = Error::from(S::ModelMissing {
            dir: "/m".into(),
            missing: "/m/config.json".into(),
        });
        assert_eq!(
            serde_json::to_value(ErrorFields(&e)).unwrap(),
            serde_json::json!({"path": "/m", "missing": "/m/config.json"})
        );
        let e = Error::from(S::SpecMismatch {
            field: "model.name",
            stored: "a".into(),
            given: "b".into(),
        });
        assert_eq!(
            serde_json::to_value(ErrorFields(&e)).unwrap(),
            serde_json::json!({"field": "model.name", "expected": "b", "found": "a"})
        );
        let e = Error::from(S::WaitTimeout {
            target: 9,
            cursor: 4,
            waited_ms: 10,
        });
        assert_eq!(
            serde_json::to_value(ErrorFields(&e)).unwrap(),
            serde_json::json!({"target": 9, "cursor": 4, "waited_ms": 10})
        );
    }

    #[test]
    fn a_view_flattens_into_its_container() {
        #[derive(Serialize)]
        struct Out<'a> {
            n: u32,
            #[serde(flatten)]
            bounds: AnswerBounds<'a>,
            after: u32,
        }
        let a = QueryAnswer {
            hits: vec![hit()],
            truncated: true,
            candidates: 9,
            semantic_pending: 0,
        };
        let out = Out {
            n: 1,
            bounds: View::of(&a),
            after: 2,
        };
        assert_eq!(
            serde_json::to_string(&out).unwrap(),
            r#"{"n":1,"truncated":true,"candidates":9,"semantic_pending":0,"after":2}"#
        );
    }

    #[test]
    fn a_view_of_something_else_than_a_struct_is_an_error() {
        struct Num;
        impl Omit for Num {
            type Of = u32;
            const FIELDS: &'static [&'static str] = &[];
            const NAME: &'static str = "Num";
            const DESCRIPTION: &'static str = "";
        }
        assert!(serde_json::to_string(&View::<Num>::of(&3)).is_err());
    }

    #[test]
    fn the_outcome_line_is_the_outcome_with_its_group_flat() {
        let o = InsertOutcome {
            key: "k".into(),
            id: Some(4),
            replaced: None,
            duplicates: vec![hit()],
            group: Some(GroupInfo {
                id: 3,
                canonical: "a".into(),
                size: 2,
            }),
            containment: vec![],
            not_linked: vec![],
        };
        let nested = serde_json::to_value(&o).unwrap();
        let flat = serde_json::to_value(OutcomeLine::from(&o)).unwrap();
        assert_eq!(nested["group"], serde_json::json!({"id": 3, "canonical": "a", "size": 2}));
        assert_eq!(
            (&flat["group"], &flat["canonical"], &flat["group_size"]),
            (&3.into(), &"a".into(), &2.into())
        );
        for k in ["key", "id", "stored", "replaced", "duplicates", "containment"] {
            assert_eq!(nested[k], flat[k], "{k}");
        }
        let http = serde_json::to_string(&HttpOutcome::from(&o)).unwrap();
        assert_eq!(
            http,
            r#"{"key":"k","id":4,"stored":true,"replaced":null,"duplicates":[{"key":"a","id":3,"hamming":2,"jaccard":0.5,"shared":7,"match":"title_year","channels":["text"],"cosine":null}],"group":{"id":3,"canonical":"a","size":2}}"#
        );
    }

    #[cfg(feature = "openapi")]
    #[test]
    fn a_view_schema_is_the_type_schema_less_its_fields_and_their_references() {
        use utoipa::{PartialSchema, ToSchema};
        let schema = serde_json::to_value(HttpHit::schema()).unwrap();
        let props: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(props, ["channels", "cosine", "hamming", "id", "jaccard", "key", "match", "shared"]);
        assert!(!schema["required"].as_array().unwrap().contains(&"score".into()));
        assert_eq!(schema["description"], HttpHitFields::DESCRIPTION);
        let mut deps = Vec::new();
        HttpHit::schemas(&mut deps);
        let names: Vec<&str> = deps.iter().map(|d| d.0.as_str()).collect();
        assert_eq!(
            names,
            ["MatchKind", "Channel"],
            "the score's MethodScore is not referred to any more"
        );
        let mut deps = Vec::new();
        AnswerBounds::schemas(&mut deps);
        assert!(
            deps.is_empty(),
            "no hit left, no Hit schema: {:?}",
            deps.iter().map(|d| &d.0).collect::<Vec<_>>()
        );
    }
}
