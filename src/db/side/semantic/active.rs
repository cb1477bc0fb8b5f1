//! The channel of an open database that has one ([`Active`]): the model, the vectors, the
//! background indexer and the documents set aside, and the channel's state as `Stats`, health and
//! metrics report it.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use crate::semantic::{self as sem, Aside, Embedder, Indexer, IndexerState, SemanticChannel};

/// The channel of an open database that has one.
pub(super) struct Active {
    pub(super) channel: Arc<SemanticChannel>,
    pub(super) embedder: Arc<Embedder>,
    /// The handle's search (`SemanticOptions::search`): queries and `--groups union` links.
    pub(super) search: sem::SearchMode,
    /// The durable cursor at open (the indexer's, once it runs).
    pub(super) cursor_at_open: u64,
    pub(super) indexer: OnceLock<Indexer>,
    /// The live documents that have no vector on purpose (the durable `semantic_aside` entries):
    /// changed with the batches that write them, under the writer lock.
    pub(super) aside: Mutex<BTreeMap<u64, (Aside, String)>>,
}

impl Active {
    /// The indexer's cursor (the durable one at open when no indexer runs).
    pub(super) fn cursor(&self) -> u64 {
        self.indexer.get().map_or(self.cursor_at_open, Indexer::cursor)
    }

    /// Live documents set aside as failures.
    pub(super) fn failures(&self) -> u64 {
        self.aside.lock().values().filter(|(k, _)| k.is_failure()).count() as u64
    }

    /// The channel's state: `off` without an indexer; a running indexer with documents set aside
    /// is `degraded`, saying how many and the first.
    pub(super) fn state(&self) -> ChannelState {
        let Some(i) = self.indexer.get() else {
            return ChannelState {
                state: "off",
                reason: None,
            };
        };
        match i.state() {
            IndexerState::Running => {
                let aside = self.aside.lock();
                let mut failed = aside.iter().filter(|(_, (k, _))| k.is_failure());
                match failed.next() {
                    None => ChannelState {
                        state: "running",
                        reason: None,
                    },
                    Some((id, (_, why))) => ChannelState {
                        state: "degraded",
                        reason: Some(format!(
                            "{} document(s) set aside by the semantic indexer (doc {id}: {why})",
                            1 + failed.count()
                        )),
                    },
                }
            }
            s => ChannelState {
                state: s.word(),
                reason: s.reason().map(|r| format!("semantic indexer: {r}")),
            },
        }
    }
}

/// The semantic channel's state as `Stats`, health and metrics report it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct ChannelState {
    /// `running`, `degraded`, `stopped`, or `off` (this handle runs no indexer).
    pub(super) state: &'static str,
    pub(super) reason: Option<String>,
}

impl ChannelState {
    pub(super) fn word(&self) -> &'static str {
        self.state
    }

    pub(super) fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }
}
