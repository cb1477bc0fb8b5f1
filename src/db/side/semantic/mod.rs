//! The CORE paper's semantic channel as a side index. With the `semantic` feature, `on.rs` is the
//! channel (the model, the queue, the background indexer, the union of the answers) and `active.rs`
//! an open database's channel and its state; without it, `off.rs` refuses to write to a database
//! created with the channel (its new documents would be acknowledged without being queued for
//! embedding, and never embedded).

#[cfg(feature = "semantic")]
mod active;
#[cfg(feature = "semantic")]
mod enable;
#[cfg(not(feature = "semantic"))]
mod off;
#[cfg(feature = "semantic")]
mod on;

#[cfg(not(feature = "semantic"))]
pub(crate) use off::Semantic;
#[cfg(feature = "semantic")]
pub(crate) use on::Semantic;
#[cfg(feature = "semantic")]
pub use on::SemanticIndex;
