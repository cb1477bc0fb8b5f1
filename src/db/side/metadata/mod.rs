//! The metadata index (CF `meta_idx`, keys in `store::keys`): lookups for exact DOI and title + year
//! matches, the `Db` queries built on them, and `check`'s verification. What is matched and how
//! values are normalised: [`crate::fingerprint::biblio`].

mod api;

pub use api::MetadataIndex;

use std::collections::HashSet;
use std::path::Path;

use rocksdb::{ColumnFamily, IteratorMode, WriteBatch, DB};

use crate::error::{Error, Result};
use crate::fingerprint::biblio::{index_values, matches, Biblio, MatchKind};
use crate::fingerprint::similarity::{hamming, jaccard, MethodScore};
use crate::fingerprint::Fingerprint;
use crate::intmap::IntMap;
use crate::store::doc_record::DocRecord;
use crate::store::keys::{be_u64, decode_meta_idx_key, meta_idx_key, meta_idx_prefix, CF_META_IDX};

use super::{Additions, BatchPart, Deciding, SideIndex};
use crate::db::base::Base;
use crate::db::options::Dedup;
use crate::db::pending::Pending;
use crate::db::snapshot::share;
use crate::db::state::State;
use crate::db::types::{Channel, CheckReport, Fault, Hit};

/// The metadata index: on in every database (a document without a DOI or a title + year has no
/// entry).
pub(crate) struct Metadata;

impl SideIndex for Metadata {
    fn name(&self) -> &'static str {
        "metadata index"
    }

    fn column_families(&self) -> Vec<String> {
        vec![CF_META_IDX.to_string()]
    }

    fn batch(&self) -> Option<Box<dyn BatchPart + '_>> {
        Some(Box::new(MetadataBatch))
    }

    /// The index agrees with the records.
    fn check(&self, base: &Base, _st: &State, records: &IntMap<u64, DocRecord>, rep: &mut CheckReport) -> Result<()> {
        let mut ids: Vec<u64> = records.keys().copied().collect();
        ids.sort_unstable();
        let biblio_of = |id: u64| records.get(&id).map(|r| r.biblio.clone());
        let rp = base.rocks_path.display().to_string();
        for (doc, what) in check_index(&base.rocks, base.rocks.cf_handle(CF_META_IDX), &ids, biblio_of, &base.rocks_path)? {
            rep.faults.push(Fault {
                doc,
                key: None,
                path: rp.clone(),
                what,
            });
        }
        Ok(())
    }
}

/// The metadata index's part of a batch (it keeps nothing between the hooks).
struct MetadataBatch;

impl BatchPart for MetadataBatch {
    /// Exact metadata matches, reported beside the text matches (never linked).
    fn on_decide(&mut self, d: &Deciding<'_>, add: &mut Additions) -> Result<()> {
        if d.asked.dedup != Dedup::Off && !d.doc.biblio.is_empty() {
            add.reported = meta_hits(d.base, d.st, d.pend, &d.doc.fp, &d.doc.biblio, d.old, d.dups)?;
        }
        Ok(())
    }

    /// A deleted document's entries (from its record's values; found by a scan for a damaged
    /// record, left out at open), a new document's.
    fn write(&mut self, db: &Base, st: &State, pend: &Pending, b: &mut WriteBatch) -> Result<()> {
        let cf = db.cf(CF_META_IDX)?;
        for &id in &pend.deleted {
            if !st.docs.contains_key(&id) {
                for item in db.rocks.iterator_cf(cf, IteratorMode::Start) {
                    let (k, _) = item.map_err(db.rocks_err("scan meta_idx"))?;
                    if decode_meta_idx_key(&k).is_some_and(|(_, _, d)| d == id) {
                        b.delete_cf(cf, k);
                    }
                }
            } else if let Some(r) = db.read_record(id)? {
                for k in index_keys(&r.biblio, id) {
                    b.delete_cf(cf, k);
                }
            }
        }
        for p in &pend.new_docs {
            for k in index_keys(&p.biblio, p.id) {
                b.put_cf(cf, k, []);
            }
        }
        Ok(())
    }
}

/// Every index key of doc `id`.
fn index_keys(b: &Biblio, id: u64) -> Vec<Vec<u8>> {
    index_values(b).iter().map(|(kind, v)| meta_idx_key(*kind, v, id)).collect()
}

/// Doc ids indexed under any value of `b`, with how they matched (DOI first), in id order per kind.
/// `cf` is `None` when the column family does not exist (a read-only handle on an older database).
pub(crate) fn lookup(rocks: &DB, cf: Option<&ColumnFamily>, b: &Biblio, rocks_path: &Path) -> Result<Vec<(u64, MatchKind)>> {
    let Some(cf) = cf else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for (kind, value) in index_values(b) {
        let Some(how) = MatchKind::of_kind(kind) else { continue };
        let p = meta_idx_prefix(kind, &value);
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
        match decode_meta_idx_key(&k) {
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

/// Exact metadata matches of `biblio` among the committed documents (live, not deleted in
/// `pend`, not `exclude`, not already in `text_hits`) and the batch's live documents, DOI matches
/// first; Hamming distance, Jaccard and containment against `fp` are computed for information.
pub(super) fn meta_hits(
    base: &Base,
    st: &State,
    pend: &Pending,
    fp: &Fingerprint,
    biblio: &Biblio,
    exclude: Option<u64>,
    text_hits: &[Hit],
) -> Result<Vec<Hit>> {
    let mut seen: HashSet<u64> = text_hits.iter().map(|h| h.id).collect();
    let mut hits = Vec::new();
    if biblio.is_empty() {
        return Ok(hits);
    }
    let found = meta_lookup(base, biblio)?;
    for (id, how) in found {
        if Some(id) == exclude || pend.deleted.contains(&id) || seen.contains(&id) {
            continue;
        }
        let Some(m) = st.docs.get(&id) else { continue };
        seen.insert(id);
        let sim = jaccard(&fp.shingles, &st.segs.read(m.loc, id)?);
        hits.push(Hit {
            key: m.key.to_string(),
            id,
            hamming: hamming(m.simhash, fp.simhash),
            jaccard: Some(sim.jaccard),
            shared: Some(sim.shared),
            containment: Some(share(sim.shared, fp.shingles.len())),
            reverse_containment: Some(share(sim.shared, m.loc.count as usize)),
            matched: how,
            score: MethodScore::Hamming(hamming(m.simhash, fp.simhash)),
            channels: vec![Channel::Text],
            cosine: None,
        });
    }
    for p in pend
        .new_docs
        .iter()
        .filter(|p| p.alive && Some(p.id) != exclude && !seen.contains(&p.id))
    {
        if let Some(how) = matches(biblio, &p.biblio) {
            let sim = jaccard(&fp.shingles, &p.fp.shingles);
            hits.push(Hit {
                key: p.key.clone(),
                id: p.id,
                hamming: hamming(p.fp.simhash, fp.simhash),
                jaccard: Some(sim.jaccard),
                shared: Some(sim.shared),
                containment: Some(share(sim.shared, fp.shingles.len())),
                reverse_containment: Some(share(sim.shared, p.fp.shingles.len())),
                matched: how,
                score: MethodScore::Hamming(hamming(p.fp.simhash, fp.simhash)),
                channels: vec![Channel::Text],
                cosine: None,
            });
        }
    }
    hits.sort_by_key(|h| (h.matched, h.id));
    Ok(hits)
}

/// [`lookup`] in this database's index.
pub(super) fn meta_lookup(base: &Base, biblio: &Biblio) -> Result<Vec<(u64, MatchKind)>> {
    lookup(&base.rocks, base.rocks.cf_handle(CF_META_IDX), biblio, &base.rocks_path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::biblio::index_values;

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
        assert_eq!(decode_meta_idx_key(&doi), Some((1, &b"10.1145/abc"[..], 7)));
        assert_eq!(decode_meta_idx_key(&doi[..doi.len() - 1]), None);
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
