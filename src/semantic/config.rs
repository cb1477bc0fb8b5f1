//! The channel's plain settings: what a database is created with ([`SemanticConfig`], stored in the
//! spec), what one handle runs it with ([`SemanticOptions`]), and what of a document is embedded
//! ([`embed_text`]). Front ends (CLI flags, HTTP, Python) convert their arguments into these.

use std::path::PathBuf;
use std::str::FromStr;

use super::error::Result;
use super::model::{BACKGROUND_NICE, DEFAULT_MAX_TOKENS};
use crate::Error;

/// Which verified edges form the duplicate groups.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Groups {
    /// Groups from the text channel's verified duplicates only (semantic matches are reported).
    #[default]
    Text,
    /// Groups over the union: a semantic match (cos ≥ β) links like a text duplicate, when the
    /// background indexer embeds the document.
    Union,
}

impl FromStr for Groups {
    type Err = Error;
    fn from_str(s: &str) -> Result<Groups> {
        match s {
            "text" => Ok(Groups::Text),
            "union" => Ok(Groups::Union),
            _ => Err(Error::InvalidOption {
                name: "groups",
                message: format!("expected `text` or `union`, got {s:?}"),
            }),
        }
    }
}

impl std::fmt::Display for Groups {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Groups::Text => "text",
            Groups::Union => "union",
        })
    }
}

/// The channel of a new database (`fpdb init --semantic MODEL_DIR ...`).
#[derive(Clone, Debug, PartialEq)]
pub struct SemanticConfig {
    /// The sentence-transformer directory (`bash scripts/fetch-model.sh` prints it).
    pub model_dir: PathBuf,
    /// The default β of queries: cos ≥ β is a semantic match. `None`: the model's calibrated β
    /// ([`super::calibrated_min_cosine`]), or [`super::DEFAULT_MIN_COSINE`] for a model without one.
    /// `--groups union` needs it given: its matches become merges.
    pub min_cosine: Option<f32>,
    /// The metadata (JSONL) field embedded, e.g. `abstract` (as the CORE paper); `None`: the text.
    pub field: Option<String>,
    /// Which edges form groups.
    pub groups: Groups,
    /// Truncation in tokens (`[CLS]`/`[SEP]` included).
    pub max_tokens: usize,
}

impl SemanticConfig {
    /// The defaults for `model_dir`: the model's calibrated β, the text, text groups,
    /// [`DEFAULT_MAX_TOKENS`] tokens.
    pub fn new(model_dir: impl Into<PathBuf>) -> SemanticConfig {
        SemanticConfig {
            model_dir: model_dir.into(),
            min_cosine: None,
            field: None,
            groups: Groups::Text,
            max_tokens: DEFAULT_MAX_TOKENS,
        }
    }

    /// Checks the ranges (β in [-1, 1], at least 3 tokens, a non-empty field name), and that a
    /// `--groups union` channel has its β given.
    pub fn validate(&self) -> Result<()> {
        match self.min_cosine {
            Some(beta) => check_beta(beta)?,
            None if self.groups == Groups::Union => {
                return Err(Error::InvalidOption {
                    name: "min_cosine",
                    message: "`--groups union` merges every pair at cos >= β into one duplicate group, and two different \
                              documents on one subject reach the model's calibrated β at its measured hard-negative \
                              false rate (1% by construction; docs/semantic.md): each such merge is a curator's undo. \
                              Give β explicitly (`--min-cosine B`, `min_cosine=B`) to accept that rate at that β"
                        .into(),
                })
            }
            None => {}
        }
        if self.max_tokens < 3 {
            return Err(Error::InvalidOption {
                name: "max_tokens",
                message: format!(
                    "{} leaves no room for a word between [CLS] and [SEP]; use at least 3",
                    self.max_tokens
                ),
            });
        }
        if self.field.as_deref() == Some("") {
            return Err(Error::InvalidOption {
                name: "semantic_field",
                message: "an empty field name; give the JSONL field to embed (e.g. `abstract`) or none for the text".into(),
            });
        }
        Ok(())
    }
}

/// β must be a cosine.
pub fn check_beta(beta: f32) -> Result<()> {
    if (-1.0..=1.0).contains(&beta) {
        Ok(())
    } else {
        Err(Error::InvalidOption {
            name: "min_cosine",
            message: format!("{beta} is outside [-1, 1]"),
        })
    }
}

/// How one handle runs the channel of a database that has one.
#[derive(Clone, Debug)]
pub struct SemanticOptions {
    /// The model directory; `None`: the one recorded at creation. Either way its identity (name +
    /// weights hash) must equal the stored spec's.
    pub model_dir: Option<PathBuf>,
    /// Threads the background indexer's model may use: the bound on the CPU it takes beside the
    /// text path (default 1 of the machine's cores).
    pub threads: usize,
    /// Documents per indexer commit (one embed call, one synced WriteBatch).
    pub batch: usize,
    /// Run the background indexer (default); off, the channel only answers queries on what is
    /// already embedded (a read-only handle never runs it).
    pub indexer: bool,
    /// How queries search the vectors.
    pub search: SearchMode,
    /// The niceness of the model's threads (default [`BACKGROUND_NICE`]: the indexer takes only
    /// the CPU the text path leaves; query embeddings share its threads). 0: normal priority.
    pub nice: i32,
}

impl Default for SemanticOptions {
    fn default() -> Self {
        SemanticOptions {
            model_dir: None,
            threads: 1,
            batch: 16,
            indexer: true,
            search: SearchMode::default(),
            nice: BACKGROUND_NICE,
        }
    }
}

/// What `SemanticIndex::backfill` did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct BackfillReport {
    /// Documents embedded by this handle's indexer.
    pub embedded: u64,
    /// Vectors the channel holds.
    pub vectors: u64,
}

/// What `SemanticIndex::backfill_texts` did with the documents it was given.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct TextBackfill {
    /// Documents embedded and stored.
    pub embedded: u64,
    /// Given documents that already had a vector (or are queued for the indexer).
    pub already: u64,
    /// Given keys the database does not hold.
    pub unknown: u64,
    /// Given documents with nothing to embed (an empty text or field).
    pub empty: u64,
}

/// What is embedded of a document: the spec's `field` of its metadata JSON when it is a non-empty
/// string there, else its text; in both cases only the first `max_tokens` whitespace-separated
/// words. The tokenizer makes at least one token of each such word, so those words hold every
/// token the model reads after truncation: the stored text embeds exactly as the whole would.
pub fn embed_text(text: &str, meta: Option<&str>, field: Option<&str>, max_tokens: usize) -> String {
    let from_field = field_text(meta, field);
    let source = from_field.as_deref().unwrap_or(text);
    first_words(source, max_tokens).to_owned()
}

/// [`embed_text`] of an owned text, without copying it: the text (or the field's value) is cut in
/// place, and a text already within `max_tokens` words is returned as it is (the writer's
/// `keep_text`: every acknowledged document of a database with the channel passes here).
pub fn embed_text_owned(text: String, meta: Option<&str>, field: Option<&str>, max_tokens: usize) -> String {
    let mut s = field_text(meta, field).unwrap_or(text);
    let keep = first_words(&s, max_tokens).len();
    s.truncate(keep);
    s
}

/// The spec's `field` of the metadata JSON, when it is a non-empty string there.
fn field_text(meta: Option<&str>, field: Option<&str>) -> Option<String> {
    let f = field?;
    let v: serde_json::Value = serde_json::from_str(meta?).ok()?;
    v.get(f)?.as_str().filter(|s| !s.trim().is_empty()).map(str::to_owned)
}

/// The prefix of `s` holding its first `n` whitespace-separated words (`char::is_whitespace`).
/// One pass over the bytes: an ASCII byte is classified as it is (the ASCII whitespace of
/// `char::is_whitespace` is `\t`..=`\r` and the space), a non-ASCII character decoded. The
/// ingest workers call it for every document of a database with the channel.
fn first_words(s: &str, n: usize) -> &str {
    let b = s.as_bytes();
    let (mut words, mut in_word, mut i) = (0, false, 0);
    while i < b.len() {
        let c = b[i];
        let space = if c < 0x80 {
            i += 1;
            matches!(c, b'\t'..=b'\r' | b' ')
        } else {
            match s[i..].chars().next() {
                Some(ch) => {
                    i += ch.len_utf8();
                    ch.is_whitespace()
                }
                None => break,
            }
        };
        if space {
            in_word = false;
        } else if !in_word {
            if words == n {
                // the word began at the character just passed
                let start = if c < 0x80 {
                    i - 1
                } else {
                    s[..i].char_indices().next_back().map_or(0, |(j, _)| j)
                };
                return &s[..start];
            }
            in_word = true;
            words += 1;
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embed_text_takes_the_field_or_the_first_words() {
        let meta = r#"{"abstract": "short abstract here", "n": 3}"#;
        assert_eq!(embed_text("a b c d e", Some(meta), Some("abstract"), 2), "short abstract ");
        assert_eq!(embed_text("a b c d e", Some(meta), Some("missing"), 3), "a b c ");
        assert_eq!(embed_text("a b c d e", Some(meta), Some("n"), 9), "a b c d e");
        assert_eq!(embed_text("a  b\nc", None, None, 9), "a  b\nc");
        assert_eq!(embed_text("", None, None, 9), "");
    }

    /// The former walk over `char_indices`: the fast one must cut every text at the same byte.
    fn first_words_reference(s: &str, n: usize) -> &str {
        let mut words = 0;
        let mut in_word = false;
        for (i, c) in s.char_indices() {
            if c.is_whitespace() {
                in_word = false;
            } else if !in_word {
                if words == n {
                    return &s[..i];
                }
                in_word = true;
                words += 1;
            }
        }
        s
    }

    #[test]
    fn first_words_cuts_where_the_char_walk_did() {
        let pieces = [
            "a",
            "bb",
            " ",
            "  ",
            "\t",
            "\n",
            "\x0b",
            "\x0c",
            "\r",
            "\u{85}",
            "\u{a0}",
            "\u{1680}",
            "\u{2003}",
            "\u{2028}",
            "\u{3000}",
            "\u{1c}",
            "é",
            "日本",
            "😀",
            "x\u{200b}y",
        ];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..4000 {
            let mut s = String::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 40) as usize;
            let mut r = seed;
            for _ in 0..len {
                r = r.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                s.push_str(pieces[(r >> 33) as usize % pieces.len()]);
            }
            for n in [1, 2, 3, 5, 8, 13, 40] {
                assert_eq!(first_words(&s, n), first_words_reference(&s, n), "{s:?} at {n}");
                let owned = embed_text_owned(s.clone(), None, None, n);
                assert_eq!(owned, embed_text(&s, None, None, n));
            }
        }
    }

    #[test]
    fn embed_text_owned_takes_the_field_or_cuts_the_text() {
        let meta = r#"{"abstract": "short abstract here", "n": 3}"#;
        let own = |t: &str, m, f, n| embed_text_owned(t.to_string(), m, f, n);
        assert_eq!(own("a b c d e", Some(meta), Some("abstract"), 2), "short abstract ");
        assert_eq!(own("a b c d e", Some(meta), Some("missing"), 3), "a b c ");
        assert_eq!(own("a b c d e", Some(meta), Some("n"), 9), "a b c d e");
        assert_eq!(own("a  b\nc", None, None, 9), "a  b\nc");
        assert_eq!(own("", None, None, 9), "");
    }

    #[test]
    fn union_groups_need_an_explicit_beta() {
        let mut c = SemanticConfig::new("m");
        c.groups = Groups::Union;
        let e = c.validate().unwrap_err();
        assert!(matches!(e, Error::InvalidOption { name: "min_cosine", .. }), "{e}");
        assert!(e.to_string().contains("--min-cosine"), "{e}");
        c.min_cosine = Some(0.9);
        assert!(c.validate().is_ok());
    }

    #[test]
    fn groups_parse_and_print() {
        for g in [Groups::Text, Groups::Union] {
            assert_eq!(g.to_string().parse::<Groups>().ok(), Some(g));
        }
        assert!("both".parse::<Groups>().is_err());
    }

    #[test]
    fn config_ranges_are_checked() {
        let mut c = SemanticConfig::new("m");
        assert!(c.validate().is_ok());
        c.min_cosine = Some(1.5);
        assert!(c.validate().is_err());
        c.min_cosine = Some(0.5);
        c.max_tokens = 2;
        assert!(c.validate().is_err());
    }
}

/// How a query searches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SearchMode {
    /// The sign-code index, then the exact cosine (recall measured ≥ 0.999 at the default β).
    Indexed,
    /// The brute-force scan over every stored vector (the reference; the default).
    #[default]
    Exact,
}
