//! Metadata matches (the CORE paper's deduplication API): a document may carry a title, a year and a
//! DOI ([`Biblio`]); exact matches on the normalised DOI, or on the normalised title together with the
//! year, are unioned with the verified text matches, each hit saying how it matched ([`MatchKind`]).
//!
//! The CORE paper (§2, §6) found that metadata alone is unreliable (more than 82% of its documents had
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
//! * Title ([`normalize_title`]): the crate's text normalizer ([`crate::fingerprint::normalize`], version 1):
//!   NFKC, lower case, tokens of alphanumerics joined by one space. `"Near-Duplicates: A Study!"`
//!   and `"near duplicates a study"` are the same title. A title with no word left (punctuation
//!   only) is stored but not indexed, like a title without a year.
//! * Year: an integer within [`YEARS`]. A title without a year (or a year without a title) is
//!   stored but not indexed: the title + year pair is the match (the CORE API's users send both).
//!
//! Where the index lives: `db::side::metadata` (lookups, `check`), keys in `store::keys` (`meta_idx_key`).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Kind byte of a DOI value (the `meta_idx` key's first byte; see `store::keys`).
pub const KIND_DOI: u8 = 1;
/// Kind byte of a title + year value.
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum MatchKind {
    /// Verified text near-duplicate (SimHash within k, Jaccard ≥ t).
    #[default]
    Text,
    /// Same normalised DOI.
    Doi,
    /// Same normalised title and the same year.
    TitleYear,
    /// The semantic channel alone: the embeddings' cosine ≥ β, the text not a verified duplicate.
    Semantic,
}

impl MatchKind {
    /// `text`, `doi` or `title_year` (the name used by the CLI and the HTTP API).
    pub fn as_str(self) -> &'static str {
        match self {
            MatchKind::Text => "text",
            MatchKind::Doi => "doi",
            MatchKind::TitleYear => "title_year",
            MatchKind::Semantic => "semantic",
        }
    }

    pub(crate) fn of_kind(kind: u8) -> Option<MatchKind> {
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

/// Normalises a title with the crate's text normalizer, version 1 for every database (the
/// metadata index stores the result; may be empty: no words).
pub fn normalize_title(raw: &str) -> String {
    let mut out = String::new();
    crate::fingerprint::normalize::normalize_into_version(1, raw, &mut out);
    out
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
        // A title with no word is kept but never indexed (so never matched), like one without a year.
        let wordless = Biblio {
            title: Some(" -- ".into()),
            year: Some(2001),
            ..Biblio::default()
        };
        assert!(validate(&wordless).is_ok());
        assert!(index_values(&wordless).is_empty());
        assert!(validate(&Biblio {
            year: Some(10_000),
            ..Biblio::default()
        })
        .is_err());
    }
}
