//! Listing the stored documents and the duplicate groups a page at a time, by a cursor: the id
//! after which the next page starts. A cursor stays valid across writes (a page starts after its
//! id whatever was inserted or deleted since), so a client can walk a database that is being
//! written; each page is one consistent read.

use rocksdb::{Direction, IteratorMode};

use crate::error::{Error, Result};
use crate::store::doc_record;
use crate::store::keys::{be_u64, doc_key, CF_DOCS};

use super::handle::Db;
use super::types::Document;

/// The most items one page holds; a larger `limit` is cut to it.
pub const MAX_PAGE: usize = 10_000;

/// One page of a listing: its items in id order, and the cursor of the next page (`None` after the
/// last page).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Page<T> {
    /// The items, in id order.
    pub items: Vec<T>,
    /// Pass it as `after` to get the next page.
    pub next: Option<u64>,
}

/// A duplicate group of two or more documents, as listed by [`Db::list_groups`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct GroupListing {
    /// Group id = doc id of the canonical, earliest member.
    pub id: u64,
    /// The canonical member's key.
    pub canonical: String,
    /// Every member's `(id, key)`, by id.
    pub members: Vec<(u64, String)>,
}

impl Db {
    /// Up to `limit` (at most [`MAX_PAGE`]) stored documents with ids above `after` (from the first
    /// when `None`), in id order, each with its record and group. Costs one RocksDB scan of `limit`
    /// records.
    pub fn list_documents(&self, after: Option<u64>, limit: usize) -> Result<Page<Document>> {
        let limit = limit.clamp(1, MAX_PAGE);
        let start = match after {
            None => 0,
            Some(u64::MAX) => return Ok(Page { items: vec![], next: None }),
            Some(a) => a + 1,
        };
        self.read_rocks(|st| {
            let mut items = Vec::with_capacity(limit.min(1024));
            let key = doc_key(start);
            let mut more = false;
            for item in self
                .inner
                .rocks
                .iterator_cf(self.cf(CF_DOCS)?, IteratorMode::From(&key, Direction::Forward))
            {
                let (k, v) = item.map_err(self.rocks_err("scan docs"))?;
                if items.len() == limit {
                    more = true;
                    break;
                }
                let id = be_u64(&k).ok_or_else(|| Error::corrupt(&self.inner.rocks_path, None, "doc key is not 8 bytes"))?;
                let record = doc_record::decode_doc(&v, &self.inner.rocks_path, Some(id))?;
                let group = self.group_info(st, record.group)?;
                items.push(Document { id, record, group });
            }
            let next = if more { items.last().map(|d: &Document| d.id) } else { None };
            Ok(Page { items, next })
        })
    }

    /// Up to `limit` (at most [`MAX_PAGE`]) duplicate groups (two or more members) with ids above
    /// `after`, in id order, each with its members. Costs a pass over the group ids in memory.
    pub fn list_groups(&self, after: Option<u64>, limit: usize) -> Page<GroupListing> {
        let limit = limit.clamp(1, MAX_PAGE);
        let st = self.inner.state.read();
        let mut ids: Vec<u64> = st.members.keys().copied().filter(|&g| after.is_none_or(|a| g > a)).collect();
        let more = ids.len() > limit;
        if more {
            ids.select_nth_unstable(limit);
            ids.truncate(limit);
        }
        ids.sort_unstable();
        let items: Vec<GroupListing> = ids
            .iter()
            .map(|&gid| {
                let members: Vec<(u64, String)> = st
                    .members
                    .get(&gid)
                    .into_iter()
                    .flatten()
                    .filter_map(|id| st.docs.get(id).map(|m| (*id, m.key.to_string())))
                    .collect();
                GroupListing {
                    id: gid,
                    canonical: st.docs.get(&gid).map(|m| m.key.to_string()).unwrap_or_default(),
                    members,
                }
            })
            .collect();
        let next = if more { items.last().map(|g| g.id) } else { None };
        Page { items, next }
    }
}
