//! Step 1 of the data path: text → normalized token stream.
//!
//! Normalizer version 1 ([`crate::fingerprint::spec::NORMALIZER_VERSION`]):
//! 1. Input that is all ASCII skips Unicode normalization (fast path). Other input is NFKC-normalized.
//! 2. Letters are lower-cased (`char::to_lowercase`, after NFKC).
//! 3. A token is a maximal run of alphanumeric characters (`char::is_alphanumeric`; ASCII: `[a-z0-9]`).
//! 4. De-hyphenation: a token that ends in `-` followed by whitespace containing a line break (`\n`)
//!    and then another token is joined with it: `"finger-\n  print"` → `fingerprint`.
//!
//! The output is the tokens joined by exactly one ASCII space, no leading or trailing space.
//! Word shingles hash byte ranges of this string directly, so its exact bytes are part of the spec.

use unicode_normalization::UnicodeNormalization;

/// Normalizes `text` into `out` (cleared first): lower-cased tokens separated by single spaces.
pub fn normalize_into(text: &str, out: &mut String) {
    out.clear();
    out.reserve(text.len());
    if text.is_ascii() {
        tokens_ascii(text.as_bytes(), out);
    } else {
        let folded: String = text.nfkc().flat_map(char::to_lowercase).collect();
        tokens_unicode(&folded, out);
    }
}

/// Normalizes `text`; see the module docs for the exact rules.
pub fn normalize(text: &str) -> String {
    let mut out = String::new();
    normalize_into(text, &mut out);
    out
}

/// Whether position `i` (just after a `-`) starts a line-break continuation: whitespace that contains
/// `\n`, followed by an alphanumeric character. Returns the index of that character.
fn hyphen_join<F: Fn(usize) -> Option<(char, usize)>>(mut i: usize, next: F) -> Option<usize> {
    let mut saw_newline = false;
    while let Some((c, len)) = next(i) {
        if c == '\n' {
            saw_newline = true;
        } else if !c.is_whitespace() {
            return (saw_newline && c.is_alphanumeric()).then_some(i);
        }
        i += len;
    }
    None
}

fn tokens_ascii(b: &[u8], out: &mut String) {
    let mut i = 0;
    let mut in_token = false;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphanumeric() {
            if !in_token && !out.is_empty() {
                out.push(' ');
            }
            in_token = true;
            out.push(c.to_ascii_lowercase() as char);
            i += 1;
        } else {
            if in_token && c == b'-' {
                if let Some(j) = hyphen_join(i + 1, |k| b.get(k).map(|&x| (x as char, 1))) {
                    i = j;
                    continue;
                }
            }
            in_token = false;
            i += 1;
        }
    }
}

fn tokens_unicode(s: &str, out: &mut String) {
    let mut in_token = false;
    let mut i = 0;
    while let Some(c) = s[i..].chars().next() {
        let len = c.len_utf8();
        if c.is_alphanumeric() {
            if !in_token && !out.is_empty() {
                out.push(' ');
            }
            in_token = true;
            out.push(c);
            i += len;
        } else {
            if in_token && c == '-' {
                if let Some(j) = hyphen_join(i + len, |k| s.get(k..).and_then(|r| r.chars().next()).map(|x| (x, x.len_utf8()))) {
                    i = j;
                    continue;
                }
            }
            in_token = false;
            i += len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn lowercases_and_splits_on_non_alphanumerics() {
        assert_eq!(normalize("Hello, World!  It's 2024."), "hello world it s 2024");
    }

    #[test]
    fn joins_words_hyphenated_across_line_breaks_only() {
        assert_eq!(normalize("finger-\n  print data-set"), "fingerprint data set");
        assert_eq!(normalize("finger- print"), "finger print");
        assert_eq!(normalize("end-\n"), "end");
        assert_eq!(normalize("a -\nb"), "a b");
    }

    #[test]
    fn nfkc_folds_compatibility_forms_for_non_ascii() {
        // U+FB01 (fi ligature) and full-width letters fold under NFKC.
        assert_eq!(normalize("\u{FB01}le ＡＢＣ Straße"), "file abc straße");
        assert_eq!(normalize("Ünïcödé-\nTëxt"), "ünïcödétëxt");
    }

    #[test]
    fn empty_and_whitespace_give_no_tokens() {
        assert_eq!(normalize(""), "");
        assert_eq!(normalize(" \n\t -- "), "");
    }
}
