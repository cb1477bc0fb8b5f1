//! The semantic channel added to a database that was created without it, and the embedding of
//! documents stored before it from their texts given again (`fpdb semantic backfill DB --semantic
//! MODEL_DIR --input FILE`): fpdb keeps shingle sets, not texts, so the texts of documents that
//! were never queued must come from the caller.
//!
//! Invariants (those of `store.rs`): the channel is added with its cursor and its floor at the next
//! document id, so every document stored before is below the floor and "never queued" — it may
//! have no vector (`check` counts it as not backfilled, not as a fault) — and every document inserted after is queued
//! and embedded by the background indexer. This module embeds only documents below the durable
//! cursor that have no vector, and writes their vectors without moving the cursor (read under the
//! writer lock: only the indexer moves it, under the same lock). A crash between two of its
//! batches loses nothing written; running it again skips the documents that have their vector.

use std::path::Path;

use rocksdb::{WriteBatch, WriteOptions};

use crate::db::handle::Db;
use crate::db::options::Options;
use crate::db::types::NewDoc;
use crate::error::{Error, Result};
use crate::semantic::{self as sem, embed_text_owned, Embedder, EmbedderOptions, SemanticConfig, SemanticSpec, StoredVector, TextBackfill};
use crate::store::keys::CF_META;

use super::on::{commit_vectors, Links, SemanticIndex};

impl Db {
    /// Adds the semantic channel to the database at `path`, which was created without it: the
    /// model loaded and its spec stored with the durable cursor at the next document id, in one
    /// synced write (a crash leaves the database with or without the channel). Documents
    /// inserted from now on are embedded by the background indexer; those stored before, by
    /// [`SemanticIndex::backfill_texts`] from their texts. Opens and closes the database; open it
    /// again to use the channel.
    pub fn enable_semantic(path: impl AsRef<Path>, cfg: &SemanticConfig, opts: Options) -> Result<()> {
        let path = path.as_ref();
        cfg.validate()?;
        let d = Db::open_with(path, opts)?;
        if d.semantic().spec().is_some() {
            return Err(Error::InvalidOption {
                name: "semantic",
                message: format!(
                    "{} already has a semantic channel; `fpdb semantic backfill DB --input FILE` embeds its documents",
                    path.display()
                ),
            });
        }
        let embedder = Embedder::load(
            &cfg.model_dir,
            &EmbedderOptions {
                max_tokens: cfg.max_tokens,
                threads: 1,
                ..EmbedderOptions::default()
            },
        )?;
        let mut spec = SemanticSpec::from_config(embedder.info().clone(), cfg);
        spec.model_dir = cfg.model_dir.canonicalize().ok().or(spec.model_dir);
        let w = d.lock_writer()?;
        let meta = d.cf(CF_META)?;
        let mut b = WriteBatch::default();
        sem::stage_spec(&mut b, meta, &spec)?;
        b.put_cf(meta, sem::META_SEMANTIC_CURSOR, w.next_id.to_le_bytes());
        sem::stage_floor(&mut b, meta, w.next_id);
        let mut wo = WriteOptions::default();
        wo.set_sync(true);
        d.inner
            .rocks
            .write_opt(b, &wo)
            .map_err(d.rocks_err("store the semantic channel's spec"))?;
        drop(w);
        drop(d); // closed: the memtables flushed (db/close.rs)
        Ok(())
    }
}

impl SemanticIndex<'_> {
    /// Embeds the stored documents among `docs` (matched by key) that are below the channel's
    /// cursor and have no vector — documents stored before the channel was added
    /// ([`Db::enable_semantic`]) — in batches of `batch`, each committed (and, in a `--groups
    /// union` database, linked) under the writer lock. What is embedded follows the spec: its
    /// field of `meta`, else the text, cut at its `max_tokens`. `progress` gets the running report
    /// after each batch.
    pub fn backfill_texts(
        &self,
        docs: impl IntoIterator<Item = Result<NewDoc>>,
        batch: usize,
        mut progress: impl FnMut(&TextBackfill),
    ) -> Result<TextBackfill> {
        let spec = self.db.semantic_active()?.channel.spec().clone();
        // Read once: the documents this embeds are below the cursor the channel was added with,
        // which only grows (`embed_and_store` checks each against the cursor under the lock).
        let cursor = sem::read_cursor(&self.db.inner.rocks, self.db.cf(CF_META)?)?;
        let mut rep = TextBackfill::default();
        let mut todo: Vec<(u64, String)> = Vec::with_capacity(batch);
        for doc in docs {
            let doc = doc?;
            match self.backfill_target(&doc.key, cursor)? {
                Target::Unknown => rep.unknown += 1,
                Target::Done => rep.already += 1,
                Target::Embed(id) => {
                    let text = embed_text_owned(doc.text, doc.meta.as_deref(), spec.field.as_deref(), spec.max_tokens);
                    if text.trim().is_empty() {
                        rep.empty += 1;
                        continue;
                    }
                    todo.push((id, text));
                    if todo.len() >= batch.max(1) {
                        rep.embedded += self.embed_and_store(std::mem::take(&mut todo))?;
                        progress(&rep);
                    }
                }
            }
        }
        rep.embedded += self.embed_and_store(todo)?;
        progress(&rep);
        Ok(rep)
    }

    /// Whether the document of `key` is one this backfill embeds (below `cursor`, no vector).
    fn backfill_target(&self, key: &str, cursor: u64) -> Result<Target> {
        let Some(id) = self.db.committed_id(key)? else {
            return Ok(Target::Unknown);
        };
        let a = self.db.semantic_active()?;
        Ok(if id >= cursor || a.channel.contains(id) {
            Target::Done
        } else {
            Target::Embed(id)
        })
    }

    /// Embeds `todo` (outside any lock), then commits the vectors of those still live, still
    /// without a vector and below the cursor. Returns how many were stored.
    fn embed_and_store(&self, todo: Vec<(u64, String)>) -> Result<u64> {
        if todo.is_empty() {
            return Ok(0);
        }
        let a = self.db.semantic_active()?;
        let texts: Vec<&str> = todo.iter().map(|(_, t)| t.as_str()).collect();
        let vectors = a.embedder.embed(&texts)?;
        let records: Vec<(u64, StoredVector, Vec<u8>)> = todo
            .iter()
            .zip(vectors)
            .map(|((id, _), v)| {
                let stored = a.channel.quantize(&v);
                let bytes = sem::encode(&stored);
                (*id, stored, bytes)
            })
            .collect();
        let links = Links::find(a, &records);
        let mut w = self.db.lock_writer()?;
        let cursor = sem::read_cursor(&self.db.inner.rocks, self.db.cf(CF_META)?)?;
        let live = self.db.inner.state.read();
        let kept: Vec<_> = records
            .into_iter()
            .filter(|(id, _, _)| *id < cursor && live.docs.contains_key(id) && !a.channel.contains(*id))
            .collect();
        drop(live);
        let n = kept.len() as u64;
        commit_vectors(self.db, &mut w, a, kept, links, Vec::new(), cursor, |_| {})?;
        Ok(n)
    }
}

enum Target {
    Unknown,
    Done,
    Embed(u64),
}
