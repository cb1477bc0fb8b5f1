//! Metadata matches (paper 001, CORE's deduplication API): a document may carry a title, a year and a
//! DOI ([`Biblio`]); exact matches on the normalised DOI, or on the normalised title together with the
//! year, are unioned with the verified text matches, each hit saying how it matched ([`MatchKind`]).
//!
//! Paper 001 (§2, §6) found that metadata alone is unreliable (more than 82% of its documents had
//! no DOI, the most frequent DOIs were generic journal DOIs shared by up to 45,184 documents, and
//! titles were often wrong), so here metadata matches are *reported*, never *acted on*: they do not
//! join duplicate groups and do not make `Dedup::Skip` drop a document. Only verified text matches do.
//!
//! # Normalisation
//!
//! * DOI ([`normalize_doi`]): whitespace removed, lower-cased (DOIs are case-insensitive), one
//!   leading `https://doi.org/`, `http://doi.org/`, `https://dx.doi.org/`, `http://dx.doi.org/`,
//!   `doi.org/` or `doi:` removed; the result must look like `10.<registrant>/<suffix>` (registrant
//!   digits and dots, suffix non-empty, no control characters; at most [`MAX_DOI_CHARS`] characters as given).
//! * Title ([`normalize_title`]): the crate's text normalizer ([`crate::normalize`], version 1):
//!   NFKC, lower case, tokens of alphanumerics joined by one space. `"Near-Duplicates: A Study!"`
//!   and `"near duplicates a study"` are the same title. A title must keep at least one word.
//! * Year: an integer within [`YEARS`]. A title without a year (or a year without a title) is
//!   stored but not indexed: the title + year pair is the match (paper 001's users send both).
//!
//! # The `meta_idx` column family
//!
//! One entry per (document, indexed value); the value of the entry is empty. The key, byte by byte:
//!
//! | bytes | content |
//! |---|---|
//! | 0 | kind: `0x01` DOI, `0x02` title + year |
//! | 1 .. n+1 | the normalised value, UTF-8: DOI: the normalised DOI; title + year: the year in decimal ASCII (`-` for negative years), one space `0x20`, the normalised title |
//! | n+1 | `0x00` (a separator: no normalised value contains a NUL byte) |
//! | n+2 .. n+10 | doc id, u64 big-endian |
//!
//! So all documents with one value form one contiguous key range (prefix kind ‖ value ‖ `0x00`),
//! in doc-id order. Example: DOI `https://doi.org/10.1145/ABC` of doc 7 is the key
//! `01 "10.1145/abc" 00 00 00 00 00 00 00 00 07`. The entries of a document are written in the same
//! RocksDB write batch as its record and deleted in the batch that deletes or replaces it; a
//! database created before this column family existed gets it (empty) when opened for writing, and
//! a read-only handle treats it as empty. `fpdb check` verifies that the entries and the records agree.

use std::path::Path;

use rocksdb::{ColumnFamily, DB};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::record::be_u64;

/// Column family of the metadata index.
pub const CF_META_IDX: &str = "meta_idx";
/// Kind byte of a DOI entry.
pub const KIND_DOI: u8 = 1;
/// Kind byte of a title + year entry.
pub const KIND_TITLE_YEAR: u8 = 2;
/// Longest accepted DOI (as given), in characters.
pub const MAX_DOI_CHARS: usize = 1024;
/// Longest accepted title, in characters.
pub const MAX_TITLE_CHARS: usize = 4096;
/// Accepted years.
pub const YEARS: std::ops::RangeInclusive<i32> = -9999..=9999;

/// Bibliographic metadata of a document: all optional, stored with its record.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Biblio {
    /// Title, as given.
    pub title: Option<String>,
    /// Year of publication.
    pub year: Option<i32>,
    /// DOI, as given (any of the accepted spellings; see [`normalize_doi`]).
    pub doi: Option<String>,
}

impl Biblio {
    /// True when no field is set.
    pub fn is_empty(&self) -> bool {
        self.title.is_none() && self.year.is_none() && self.doi.is_none()
    }
}

/// How a hit matched the document asked about.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MatchKind {
    /// Verified text near-duplicate (SimHash within k, Jaccard ≥ t).
    #[default]
    Text,
    /// Same normalised DOI.
    Doi,
    /// Same normalised title and the same year.
    TitleYear,
}

impl MatchKind {
    /// `text`, `doi` or `title_year` (the name used by the CLI and the HTTP API).
    pub fn as_str(self) -> &'static str {
        match self {
            MatchKind::Text => "text",
            MatchKind::Doi => "doi",
            MatchKind::TitleYear => "title_year",
        }
    }

    fn of_kind(kind: u8) -> Option<MatchKind> {
        match kind {
            KIND_DOI => Some(MatchKind::Doi),
            KIND_TITLE_YEAR => Some(MatchKind::TitleYear),
            _ => None,
        }
    }
}

fn invalid(what: &str, message: String) -> Error {
    Error::InvalidInput {
        key: None,
        message: format!("{what}: {message}"),
    }
}

/// Normalises a DOI (see the module docs); an error says what is wrong with it.
pub fn normalize_doi(raw: &str) -> Result<String> {
    let n = raw.chars().count();
    if n > MAX_DOI_CHARS {
        return Err(invalid("doi", format!("{n} characters; a DOI may be at most {MAX_DOI_CHARS}")));
    }
    let mut s: String = raw.chars().filter(|c| !c.is_whitespace()).flat_map(char::to_lowercase).collect();
    for prefix in [
        "https://doi.org/",
        "http://doi.org/",
        "https://dx.doi.org/",
        "http://dx.doi.org/",
        "doi.org/",
        "doi:",
    ] {
        if let Some(rest) = s.strip_prefix(prefix) {
            s = rest.to_string();
            break;
        }
    }
    let shown: String = raw.chars().take(80).collect();
    if s.chars().any(char::is_control) {
        return Err(invalid("doi", format!("{shown:?} contains control characters")));
    }
    let ok = s
        .strip_prefix("10.")
        .and_then(|r| r.split_once('/'))
        .is_some_and(|(registrant, suffix)| {
            !registrant.is_empty() && registrant.chars().all(|c| c.is_ascii_digit() || c == '.') && !suffix.is_empty()
        });
    if !ok {
        return Err(invalid(
            "doi",
            format!("{shown:?} is not a DOI; expected 10.<registrant>/<suffix>, e.g. 10.1145/1242572.1242592 (a https://doi.org/ or doi: prefix is fine)"),
        ));
    }
    Ok(s)
}

/// Normalises a title with the crate's text normalizer (may be empty: no words).
pub fn normalize_title(raw: &str) -> String {
    crate::normalize::normalize(raw)
}

/// Checks every field of `b`; the error names the field and what is accepted.
pub fn validate(b: &Biblio) -> Result<()> {
    if let Some(doi) = &b.doi {
        normalize_doi(doi)?;
    }
    if let Some(t) = &b.title {
        let n = t.chars().count();
        if n > MAX_TITLE_CHARS {
            return Err(invalid(
                "title",
                format!("{n} characters; a title may be at most {MAX_TITLE_CHARS}"),
            ));
        }
        if normalize_title(t).is_empty() {
            return Err(invalid("title", "has no words (empty, whitespace or punctuation only)".into()));
        }
    }
    if let Some(y) = b.year {
        if !YEARS.contains(&y) {
            return Err(invalid("year", format!("{y} is out of range {}..={}", YEARS.start(), YEARS.end())));
        }
    }
    Ok(())
}

/// The `(kind, normalised value)` pairs `b` is indexed under (invalid fields are left out).
pub fn index_values(b: &Biblio) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    if let Some(doi) = b.doi.as_deref().and_then(|d| normalize_doi(d).ok()) {
        out.push((KIND_DOI, doi.into_bytes()));
    }
    if let (Some(t), Some(y)) = (&b.title, b.year) {
        let t = normalize_title(t);
        if !t.is_empty() {
            out.push((KIND_TITLE_YEAR, format!("{y} {t}").into_bytes()));
        }
    }
    out
}

/// How `a` matches `b` on metadata alone (DOI before title + year), if at all.
pub fn matches(a: &Biblio, b: &Biblio) -> Option<MatchKind> {
    let theirs = index_values(b);
    index_values(a)
        .into_iter()
        .filter(|v| theirs.contains(v))
        .filter_map(|(kind, _)| MatchKind::of_kind(kind))
        .min()
}

/// The key prefix shared by every document indexed under `(kind, value)`: kind ‖ value ‖ 0x00.
pub fn prefix(kind: u8, value: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(value.len() + 10);
    k.push(kind);
    k.extend_from_slice(value);
    k.push(0);
    k
}

/// The index key of doc `id` under `(kind, value)`: kind ‖ value ‖ 0x00 ‖ id u64 BE.
pub fn index_key(kind: u8, value: &[u8], id: u64) -> Vec<u8> {
    let mut k = prefix(kind, value);
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// Splits an index key into `(kind, value, id)`; `None` when it is malformed.
pub fn decode_index_key(key: &[u8]) -> Option<(u8, &[u8], u64)> {
    let (&kind, rest) = key.split_first()?;
    let sep = rest.len().checked_sub(9)?;
    if rest[sep] != 0 || MatchKind::of_kind(kind).is_none() {
        return None;
    }
    Some((kind, &rest[..sep], be_u64(&rest[sep + 1..])?))
}

/// Every index key of doc `id`.
pub fn index_keys(b: &Biblio, id: u64) -> Vec<Vec<u8>> {
    index_values(b).iter().map(|(kind, v)| index_key(*kind, v, id)).collect()
}

/// Doc ids indexed under any value of `b`, with how they matched (DOI first), in id order per kind.
/// `cf` is `None` when the column family does not exist (a read-only handle on an older database).
pub(crate) fn lookup(rocks: &DB, cf: Option<&ColumnFamily>, b: &Biblio, rocks_path: &Path) -> Result<Vec<(u64, MatchKind)>> {
    let Some(cf) = cf else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for (kind, value) in index_values(b) {
        let Some(how) = MatchKind::of_kind(kind) else { continue };
        let p = prefix(kind, &value);
        let mut it = rocks.raw_iterator_cf(cf);
        it.seek(&p);
        while let Some(key) = it.key() {
            if !key.starts_with(&p) {
                break;
            }
            match key.get(p.len()..).and_then(be_u64) {
                Some(id) => out.push((id, how)),
                None => {
                    return Err(Error::corrupt(
                        rocks_path,
                        None,
                        format!("meta_idx key {key:?} does not end in 0x00 and an 8-byte doc id"),
                    ))
                }
            }
            it.next();
        }
        it.status().map_err(|e| Error::rocks("read meta_idx", rocks_path, e))?;
    }
    Ok(out)
}

/// Verifies the index against the records (`biblio_of(id)` is `None` for an id without a live
/// record): every entry decodes and names a live document indexed under that value, and every
/// expected entry exists. Returns `(doc, what is wrong)` per fault.
pub(crate) fn check_index(
    rocks: &DB,
    cf: Option<&ColumnFamily>,
    ids: &[u64],
    biblio_of: impl Fn(u64) -> Option<Biblio>,
    rocks_path: &Path,
) -> Result<Vec<(Option<u64>, String)>> {
    let mut faults = Vec::new();
    let mut expected = 0u64;
    for &id in ids {
        if let Some(b) = biblio_of(id) {
            let keys = index_keys(&b, id);
            expected += keys.len() as u64;
            if let Some(cf) = cf {
                for k in keys {
                    if rocks
                        .get_pinned_cf(cf, &k)
                        .map_err(|e| Error::rocks("read meta_idx", rocks_path, e))?
                        .is_none()
                    {
                        faults.push((
                            Some(id),
                            format!("meta_idx entry {:?} is missing", String::from_utf8_lossy(&k[1..k.len() - 9])),
                        ));
                    }
                }
            } else if !keys.is_empty() {
                faults.push((
                    Some(id),
                    "the record has a title+year or DOI but the meta_idx column family is missing".into(),
                ));
            }
        }
    }
    let Some(cf) = cf else { return Ok(faults) };
    let mut found = 0u64;
    for item in rocks.iterator_cf(cf, rocksdb::IteratorMode::Start) {
        let (k, _) = item.map_err(|e| Error::rocks("scan meta_idx", rocks_path, e))?;
        found += 1;
        match decode_index_key(&k) {
            Some((kind, value, id)) => {
                let ok = biblio_of(id).is_some_and(|b| index_values(&b).iter().any(|(kk, v)| *kk == kind && v == value));
                if !ok {
                    faults.push((
                        Some(id),
                        format!(
                            "meta_idx entry {:?} names no live document with that value",
                            String::from_utf8_lossy(value)
                        ),
                    ));
                }
            }
            None => faults.push((None, format!("meta_idx key {k:?} is malformed"))),
        }
    }
    if found != expected {
        faults.push((None, format!("meta_idx has {found} entries, the records need {expected}")));
    }
    Ok(faults)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dois_normalise_to_one_spelling() {
        for raw in [
            "10.1145/ABC.1",
            " https://doi.org/10.1145/abc.1",
            "doi:10.1145/Abc.1",
            "DOI: 10.1145/abc.1",
            "http://dx.doi.org/10.1145/abc.1\n",
        ] {
            assert_eq!(normalize_doi(raw).unwrap(), "10.1145/abc.1", "{raw:?}");
        }
        for bad in [
            "",
            "11.1/x",
            "10./x",
            "10.12",
            "10.12/",
            "10.ab/x",
            "https://example.org/10.1/x",
            "10.1/a\u{0}b",
        ] {
            assert!(normalize_doi(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn titles_use_the_text_normalizer() {
        assert_eq!(normalize_title("Near-Duplicates: A  Study!"), "near duplicates a study");
        assert!(validate(&Biblio {
            title: Some(" -- ".into()),
            ..Biblio::default()
        })
        .is_err());
        assert!(validate(&Biblio {
            year: Some(10_000),
            ..Biblio::default()
        })
        .is_err());
    }

    #[test]
    fn keys_roundtrip_byte_by_byte() {
        let b = Biblio {
            title: Some("A Study".into()),
            year: Some(2019),
            doi: Some("https://doi.org/10.1145/ABC".into()),
        };
        let keys = index_keys(&b, 7);
        let mut doi = vec![1u8];
        doi.extend(b"10.1145/abc");
        doi.push(0);
        doi.extend(7u64.to_be_bytes());
        let mut ty = vec![2u8];
        ty.extend(b"2019 a study");
        ty.push(0);
        ty.extend(7u64.to_be_bytes());
        assert_eq!(keys, vec![doi.clone(), ty]);
        assert_eq!(decode_index_key(&doi), Some((1, &b"10.1145/abc"[..], 7)));
        assert_eq!(decode_index_key(&doi[..doi.len() - 1]), None);
        // Title without year, or year without title: not indexed.
        assert!(index_values(&Biblio {
            title: Some("A Study".into()),
            ..Biblio::default()
        })
        .is_empty());
        assert!(index_values(&Biblio {
            year: Some(1),
            ..Biblio::default()
        })
        .is_empty());
    }
}
