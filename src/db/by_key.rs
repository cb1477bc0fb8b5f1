//! Questions about a stored document by its key: its near-duplicates from its stored fingerprint
//! (no text needed), and a filter of hits by a field of their stored metadata.

use crate::error::Result;
use crate::fingerprint::Fingerprint;

use super::handle::Db;
use super::options::QueryOptions;
use super::types::{Hit, QueryAnswer};

impl Db {
    /// The near-duplicates of the stored document `key`, found from what is stored of it (its
    /// SimHash, shingle set and method sketch): the hits a query with its text gets, less the
    /// document itself. The semantic channel and the metadata matches are not consulted (they need
    /// the text, or a title, year or DOI). `None` when no document has the key.
    pub fn query_stored(&self, key: &str, opts: &QueryOptions) -> Result<Option<QueryAnswer>> {
        let Some(doc) = self.get(key)? else { return Ok(None) };
        let fp = self.with_state(|st| {
            Ok(Fingerprint {
                simhash: doc.record.simhash,
                shingles: Vec::new(),
                sketch: self.stored_sketch(st, doc.id),
            })
        })?;
        let Some(shingles) = self.shingles(doc.id)? else {
            // Deleted between the two reads: as absent.
            return Ok(None);
        };
        let fp = Fingerprint { shingles, ..fp };
        // One more hit, for the document itself.
        let mut o = opts.clone();
        o.limit = opts.limit.map(|l| l.saturating_add(1));
        let mut answer = self.query_fingerprint_answer(&fp, &o)?;
        answer.hits.retain(|h| h.id != doc.id);
        answer.hits.truncate(opts.limit.unwrap_or(usize::MAX));
        Ok(Some(answer))
    }

    /// Keeps the hits whose stored document has `field` = `value`: a field of its metadata (a
    /// string equal to `value`, or a number or boolean whose JSON text is `value`), or its `title`,
    /// `year` or `doi`. A document without the field does not match.
    pub fn filter_by_meta(&self, hits: &mut Vec<Hit>, field: &str, value: &str) -> Result<()> {
        let mut keep = Vec::with_capacity(hits.len());
        for h in hits.drain(..) {
            let Some(doc) = self.get(&h.key)? else { continue };
            let r = &doc.record;
            let matches = match field {
                "title" => r.biblio.title.as_deref() == Some(value),
                "doi" => r.biblio.doi.as_deref() == Some(value),
                "year" => r.biblio.year.is_some_and(|y| y.to_string() == value),
                _ => r
                    .meta
                    .as_deref()
                    .and_then(|m| serde_json::from_str::<serde_json::Value>(m).ok())
                    .and_then(|m| m.get(field).cloned())
                    .is_some_and(|v| match v {
                        serde_json::Value::String(s) => s == value,
                        serde_json::Value::Number(_) | serde_json::Value::Bool(_) => {
                            let shown = v.to_string();
                            shown == value
                        }
                        _ => false,
                    }),
            };
            if matches {
                keep.push(h);
            }
        }
        *hits = keep;
        Ok(())
    }
}
