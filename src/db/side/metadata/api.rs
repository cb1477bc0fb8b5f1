//! The metadata index's API on [`Db`]: exact DOI and title + year matches, and the CORE paper's
//! union of text and metadata duplicates.

use std::collections::HashSet;

use super::{meta_hits, meta_lookup};
use crate::db::handle::Db;
use crate::db::options::QueryOptions;
use crate::db::pending::Pending;
use crate::db::types::Hit;
use crate::error::Result;
use crate::fingerprint::biblio::{self, Biblio, MatchKind};

/// The metadata index of a database ([`Db::metadata`]): exact DOI and title + year matches, and
/// the CORE paper's union of text near-duplicates and metadata matches.
#[derive(Clone, Copy, Debug)]
pub struct MetadataIndex<'a> {
    pub(crate) db: &'a Db,
}

impl Db {
    /// The metadata index's API ([`MetadataIndex`]).
    pub fn metadata(&self) -> MetadataIndex<'_> {
        MetadataIndex { db: self }
    }
}

impl MetadataIndex<'_> {
    /// Live documents whose normalised DOI, or normalised title and year, equal `biblio`'s, with how
    /// they matched (DOI first; one entry per document).
    pub fn matches(&self, biblio: &Biblio) -> Result<Vec<(u64, MatchKind)>> {
        biblio::validate(biblio)?;
        let found = meta_lookup(&self.db.inner, biblio)?;
        self.db.with_state(|st| {
            let mut seen = HashSet::new();
            Ok(found
                .iter()
                .copied()
                .filter(|(id, _)| st.docs.contains_key(id) && seen.insert(*id))
                .collect())
        })
    }

    /// Verified text near-duplicates of `text` unioned with exact metadata matches of `biblio`
    /// (the CORE paper's API): text hits first (best first), then metadata-only hits (DOI, then title +
    /// year), each saying how it matched; `opts.limit` caps the whole list. An empty text gives
    /// metadata matches only.
    pub fn check_duplicates(&self, text: &str, biblio: &Biblio, opts: &QueryOptions) -> Result<Vec<Hit>> {
        biblio::validate(biblio)?;
        let fp = self.db.fingerprinter().fingerprint(text);
        // The text hits come from the database's own query path (whatever its method); the limit
        // applies to the union below.
        let mut text_opts = opts.clone();
        text_opts.limit = None;
        let text_hits = if fp.shingles.is_empty() {
            Vec::new()
        } else {
            self.db.query_fingerprint(&fp, &text_opts)?
        };
        let mut hits = self.db.with_state(|st| {
            let mut hits = text_hits.clone();
            let meta = meta_hits(&self.db.inner, st, &Pending::default(), &fp, biblio, None, &hits)?;
            hits.extend(meta);
            Ok(hits)
        })?;
        hits.truncate(opts.limit.unwrap_or(usize::MAX));
        Ok(hits)
    }
}
