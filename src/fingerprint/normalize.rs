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
        tokens_ascii(text, out);
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

/// Each byte's lower-case form when it is an ASCII letter or digit, a space otherwise.
static ASCII_TOKEN_BYTE: [u8; 256] = {
    let mut t = [b' '; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        if b.is_ascii_alphanumeric() {
            t[c] = b.to_ascii_lowercase();
        }
        c += 1;
    }
    t
};

/// The ASCII path: the same tokens as [`tokens_unicode`] gives for the lower-cased text (tested).
/// Branch-free per byte between hyphens (a token boundary is unpredictable, and mispredicted
/// branches were most of this function's time): every byte is written, a letter or digit
/// lower-cased and anything else as a space, and the write position advances unless the byte is a
/// second separator in a row. Only at a hyphen ending a token is the line-break join checked.
fn tokens_ascii(text: &str, out: &mut String) {
    let b = text.as_bytes();
    let mut buf = std::mem::take(out).into_bytes();
    buf.clear();
    buf.resize(b.len() + 1, b' ');
    let (mut w, mut i) = (0usize, 0usize);
    let mut prev = false; // the last byte written belongs to a token
    while i < b.len() {
        let end = b[i..].iter().position(|&c| c == b'-').map_or(b.len(), |p| i + p);
        for &c in &b[i..end] {
            let x = ASCII_TOKEN_BYTE[c as usize];
            let alnum = x != b' ';
            buf[w] = x;
            w += usize::from(alnum | prev);
            prev = alnum;
        }
        i = end;
        if i < b.len() {
            // A hyphen: a line break after it continues the token on the next line.
            let join = if prev {
                hyphen_join(i + 1, |k| b.get(k).map(|&x| (x as char, 1)))
            } else {
                None
            };
            match join {
                Some(j) => i = j,
                None => {
                    buf[w] = b' ';
                    w += usize::from(prev);
                    prev = false;
                    i += 1;
                }
            }
        }
    }
    if w > 0 && buf[w - 1] == b' ' {
        w -= 1;
    }
    buf.truncate(w);
    // Only ASCII bytes were written, so this never takes the lossy branch.
    *out = String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
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
    use super::{normalize, tokens_ascii, tokens_unicode};
    use proptest::prelude::*;

    proptest! {
        /// The ASCII fast path gives the tokens of the general path on the lower-cased text.
        #[test]
        fn the_ascii_path_equals_the_unicode_path(text in "[a-zA-Z0-9 \\-\\n\\t.,'_]{0,80}") {
            let (mut fast, mut general) = (String::new(), String::new());
            tokens_ascii(&text, &mut fast);
            tokens_unicode(&text.to_lowercase(), &mut general);
            prop_assert_eq!(fast, general);
        }
    }

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
