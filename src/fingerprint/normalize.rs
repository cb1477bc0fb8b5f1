//! Step 1 of the data path: text → normalized token stream.
//!
//! Two versions, chosen by the spec's `normalizer` field ([`crate::fingerprint::spec`]); a database
//! keeps the one it was created with, new specs get [`NORMALIZER_VERSION`] (2). Their output is the
//! same for every text whose normalized form holds none of the characters rule 5–8 name, ASCII
//! text among them.
//!
//! Version 1:
//! 1. Input that is all ASCII skips Unicode normalization (fast path). Other input is NFKC-normalized.
//! 2. Letters are lower-cased (`char::to_lowercase`, after NFKC).
//! 3. A token is a maximal run of alphanumeric characters (`char::is_alphanumeric`; ASCII: `[a-z0-9]`).
//! 4. De-hyphenation: a token that ends in `-` followed by whitespace containing a line break (`\n`)
//!    and then another token is joined with it: `"finger-\n  print"` → `fingerprint`.
//!
//! Version 2: rules 1–4, and
//! 5. Scripts written without spaces between words (Han, Hiragana, Katakana, Thai, Lao, Khmer,
//!    Myanmar; [`is_unspaced`]): each character is a token of its own, so a word shingle is a
//!    character n-gram there. (Version 1 made a whole clause one token: one changed character lost
//!    every shingle that touched the clause.)
//! 6. A combining mark (`Mn`, `Mc`, `Me`) that follows a token's character belongs to the token
//!    (version 1 split Devanagari words at the virama and Thai ones at tone marks).
//! 7. Default-ignorable code points (soft hyphen, zero-width space and joiners, bidi controls,
//!    variation selectors, BOM; [`is_ignorable`]) are dropped: they neither end a token nor appear
//!    in it, so `"repre\u{AD}sentation"` → `representation`.
//! 8. Rule 4 also joins at U+2010 HYPHEN and U+00AD SOFT HYPHEN before a line break.
//!
//! The output is the tokens joined by exactly one ASCII space, no leading or trailing space.
//! Word shingles hash byte ranges of this string directly, so its exact bytes are part of the spec.

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};

/// Version of the normalizer new specs get (see `normalize`). Part of every spec.
pub const NORMALIZER_VERSION: u32 = 2;
/// The oldest normalizer this build still implements (databases keep theirs).
pub const OLDEST_NORMALIZER_VERSION: u32 = 1;

/// Normalizes `text` into `out` (cleared first) with the current normalizer ([`NORMALIZER_VERSION`]).
pub fn normalize_into(text: &str, out: &mut String) {
    normalize_into_version(NORMALIZER_VERSION, text, out);
}

/// Normalizes `text` into `out` (cleared first) with normalizer `version`: lower-cased tokens
/// separated by single spaces. A version other than 1 or 2 is refused earlier, by
/// `FingerprintSpec::validate`; here it is treated as 2.
pub fn normalize_into_version(version: u32, text: &str, out: &mut String) {
    out.clear();
    out.reserve(text.len());
    if text.is_ascii() {
        // Rules 5–8 name no ASCII character: both versions take this path.
        tokens_ascii(text, out);
        return;
    }
    let mut buf = std::mem::take(out).into_bytes();
    buf.clear();
    for_each_piece(version, text, |piece| match piece {
        Piece::Ascii(b) => tokens_ascii_append(b, &mut buf),
        Piece::Normalized(p) => append_piece(&mut buf, p.as_bytes()),
    });
    // `buf` holds ASCII pieces and whole strings: it is UTF-8, the lossy branch is never taken.
    *out = String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
}

/// A piece of a text, in the order [`for_each_piece`] gives them.
pub(crate) enum Piece<'a> {
    /// An ASCII stretch of the text, to be tokenized by the ASCII rules.
    Ascii(&'a [u8]),
    /// The normalized form of a stretch holding non-ASCII characters (tokens joined by one space;
    /// possibly empty).
    Normalized(&'a str),
}

/// Cuts `text` into pieces whose normalized forms, the empty ones left out and the others joined
/// by one space, are the normalized text under normalizer `version`: its ASCII stretches take the
/// ASCII path, and only the stretches around non-ASCII characters (cut where the token stream is
/// between tokens and NFKC cannot reach across, [`is_cut`]) the Unicode one. An ASCII text is one
/// piece.
pub(crate) fn for_each_piece(version: u32, text: &str, mut f: impl FnMut(Piece<'_>)) {
    let b = text.as_bytes();
    let Some(first) = next_non_ascii(b, 0) else {
        f(Piece::Ascii(b));
        return;
    };
    let mut folded = String::new();
    let mut piece = String::new();
    let mut pos = 0;
    let mut q = Some(first);
    while let Some(at) = q {
        let start = (pos + 1..=at).rev().find(|&p| is_cut(b, p)).unwrap_or(pos);
        let end = (at + 1..b.len()).find(|&p| is_cut(b, p)).unwrap_or(b.len());
        if start > pos {
            f(Piece::Ascii(&b[pos..start]));
        }
        unicode_piece(version, &text[start..end], &mut folded, &mut piece);
        f(Piece::Normalized(&piece));
        pos = end;
        q = next_non_ascii(b, pos);
    }
    if pos < b.len() {
        f(Piece::Ascii(&b[pos..]));
    }
}

/// The index of the first non-ASCII byte of `b` from `i` on; eight bytes at a time.
fn next_non_ascii(b: &[u8], mut i: usize) -> Option<usize> {
    while let Some(Ok(word)) = b.get(i..i + 8).map(<[u8; 8]>::try_from) {
        let high = u64::from_le_bytes(word) & 0x8080_8080_8080_8080;
        if high != 0 {
            return Some(i + (high.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    b.get(i..)?.iter().position(|&x| x >= 0x80).map(|p| i + p)
}

/// Whether the text may be cut before byte `p` (`0 < p < b.len()`): the normalized text of
/// `b[..p]` and of `b[p..]`, joined by one space when both have a token, is that of `b`. So at an
/// ASCII byte (NFKC never joins it with what precedes it) that ends a token and cannot take part in
/// a line-break join (rule 4): punctuation other than `-`, or whitespace just after ASCII that is
/// neither whitespace nor `-` (so no hyphen's whitespace run reaches it).
#[inline]
fn is_cut(b: &[u8], p: usize) -> bool {
    let x = b[p];
    if x >= 0x80 || x == b'-' || x.is_ascii_alphanumeric() {
        return false;
    }
    if !(x as char).is_whitespace() {
        return true;
    }
    let y = b[p - 1];
    y < 0x80 && y != b'-' && !(y as char).is_whitespace()
}

/// The normalized text of a piece with non-ASCII characters into `piece` (cleared first): NFKC
/// (skipped where the quick check says the piece is already NFKC: NFKC would return it unchanged),
/// lower-casing into `folded`, then the Unicode tokenizer of `version`.
fn unicode_piece(version: u32, text: &str, folded: &mut String, piece: &mut String) {
    folded.clear();
    piece.clear();
    if is_nfkc_quick(text.chars()) == IsNormalized::Yes {
        lower_into(text.chars(), folded);
    } else {
        lower_into(text.nfkc(), folded);
    }
    if version == 1 {
        tokens_unicode(folded, piece);
    } else {
        tokens_unicode_v2(folded, piece);
    }
}

/// Appends a piece of normalized text (no leading or trailing space) to `buf`, one space between.
fn append_piece(buf: &mut Vec<u8>, piece: &[u8]) {
    if piece.is_empty() {
        return;
    }
    if !buf.is_empty() {
        buf.push(b' ');
    }
    buf.extend_from_slice(piece);
}

/// Appends the lower-case form of every character (`char::to_lowercase`; ASCII directly).
fn lower_into(chars: impl Iterator<Item = char>, out: &mut String) {
    for c in chars {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else {
            out.extend(c.to_lowercase());
        }
    }
}

/// Normalizes `text` with the current normalizer; see the module docs for the exact rules.
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
    let mut buf = std::mem::take(out).into_bytes();
    buf.clear();
    tokens_ascii_append(text.as_bytes(), &mut buf);
    // Only ASCII bytes were written, so this never takes the lossy branch.
    *out = String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
}

/// [`tokens_ascii`] of the ASCII bytes `b`, appended to `buf` (one space between what `buf` held
/// and the first token, if both are there).
fn tokens_ascii_append(b: &[u8], buf: &mut Vec<u8>) {
    let base = buf.len();
    // A space to join with what came before; `w` starts after it and steps back over it if no
    // token follows.
    let start = base + usize::from(base > 0);
    buf.resize(start + b.len() + 1, b' ');
    let (mut w, mut i) = (start, 0usize);
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
    if w > start && buf[w - 1] == b' ' {
        w -= 1;
    }
    buf.truncate(if w == start { base } else { w });
}

fn tokens_unicode(s: &str, out: &mut String) {
    let mut in_token = false;
    let mut i = 0;
    let b = s.as_bytes();
    while i < b.len() {
        // ASCII other than '-' (the text is lower-cased): a letter or digit continues or starts a
        // token, anything else ends it; no character decoding.
        let x = b[i];
        if x < 0x80 && x != b'-' {
            let t = ASCII_TOKEN_BYTE[x as usize];
            if t != b' ' {
                if !in_token && !out.is_empty() {
                    out.push(' ');
                }
                in_token = true;
                out.push(x as char);
            } else {
                in_token = false;
            }
            i += 1;
            continue;
        }
        let Some(c) = s[i..].chars().next() else { break };
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
                if let Some(j) = hyphen_join(i + len, |k| char_at(s, k)) {
                    i = j;
                    continue;
                }
            }
            in_token = false;
            i += len;
        }
    }
}

/// The character at byte `k` of `s` and its length, if `k` is inside `s` at a character boundary.
fn char_at(s: &str, k: usize) -> Option<(char, usize)> {
    s.get(k..).and_then(|r| r.chars().next()).map(|x| (x, x.len_utf8()))
}

/// Version 2's Unicode path (rules 5–8 on top of [`tokens_unicode`]).
fn tokens_unicode_v2(s: &str, out: &mut String) {
    #[derive(PartialEq)]
    enum At {
        Gap,
        Word,
        /// Just after a character of an unspaced script: the next letter starts a new token.
        Single,
    }
    let mut at = At::Gap;
    let mut i = 0;
    let b = s.as_bytes();
    while i < b.len() {
        // ASCII other than '-' (the text is lower-cased): a letter or digit is of a spaced script,
        // neither a mark nor ignorable, so it continues a word or starts one; anything else ends
        // the token. No character decoding.
        let x = b[i];
        if x < 0x80 && x != b'-' {
            if ASCII_TOKEN_BYTE[x as usize] != b' ' {
                if at != At::Word {
                    if !out.is_empty() {
                        out.push(' ');
                    }
                    at = At::Word;
                }
                out.push(x as char);
            } else {
                at = At::Gap;
            }
            i += 1;
            continue;
        }
        let Some(c) = s[i..].chars().next() else { break };
        let len = c.len_utf8();
        i += len;
        if at != At::Gap && matches!(c, '-' | '\u{2010}' | '\u{AD}') {
            if let Some(j) = hyphen_join(i, |k| char_at(s, k)) {
                i = j;
                continue;
            }
        }
        if is_ignorable(c) {
            continue;
        }
        if c.is_alphanumeric() {
            // Does `c` continue the token? A mark always does (an alphabetic one as in version 1);
            // after a word, so does any letter of a spaced script. The mark table is looked up
            // only where it decides.
            let unspaced = is_unspaced(c);
            let attach = match at {
                At::Gap => false,
                At::Word => !unspaced || is_mark(c),
                At::Single => is_mark(c),
            };
            if !attach {
                if !out.is_empty() {
                    out.push(' ');
                }
                at = if unspaced { At::Single } else { At::Word };
            }
            out.push(c);
        } else if at != At::Gap && is_mark(c) {
            out.push(c);
        } else {
            at = At::Gap;
        }
    }
}

/// A combining mark (`Mn`, `Mc`, `Me`); none lies below U+0300, so most text skips the table.
#[inline]
fn is_mark(c: char) -> bool {
    c as u32 >= 0x300 && is_combining_mark(c)
}

/// Rule 5: a character of a script written without spaces between words (by code block: Han
/// ideographs with their radicals, iteration marks and extensions, Hiragana, Katakana, Thai, Lao,
/// Khmer, Myanmar). Hangul is written with spaces and is not among them.
pub fn is_unspaced(c: char) -> bool {
    c as u32 >= 0x0E00
        && matches!(c as u32,
            0x0E00..=0x0EFF // Thai, Lao
            | 0x1000..=0x109F // Myanmar
            | 0x1780..=0x17FF | 0x19E0..=0x19FF // Khmer, Khmer symbols
            | 0x2E80..=0x2FDF // CJK radicals, Kangxi radicals
            | 0x3005..=0x3007 | 0x3021..=0x3029 | 0x3038..=0x303C // ideographic iteration marks, numerals
            | 0x3040..=0x30FF | 0x31F0..=0x31FF // Hiragana, Katakana, Katakana phonetic extensions
            | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF // CJK ideographs, compatibility ideographs
            | 0xFF66..=0xFF9F // half-width Katakana (NFKC folds them; kept for completeness)
            | 0x1B000..=0x1B16F // Kana supplement and extensions
            | 0x20000..=0x3FFFF // CJK ideographs, extensions B and later
        )
}

/// Rule 7: Unicode's `Default_Ignorable_Code_Point` set (DerivedCoreProperties.txt, Unicode 15).
pub fn is_ignorable(c: char) -> bool {
    c as u32 >= 0xAD
        && matches!(c as u32,
            0x00AD | 0x034F | 0x061C | 0x115F..=0x1160 | 0x17B4..=0x17B5 | 0x180B..=0x180F
            | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F | 0x3164 | 0xFE00..=0xFE0F
            | 0xFEFF | 0xFFA0 | 0xFFF0..=0xFFF8 | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0xE0000..=0xE0FFF
        )
}

#[cfg(test)]
mod tests {
    use super::{lower_into, next_non_ascii, normalize, normalize_into_version, tokens_ascii, tokens_unicode, tokens_unicode_v2};
    use proptest::prelude::*;
    use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};

    /// The non-ASCII path as it was before the ASCII stretches of a non-ASCII text took the ASCII
    /// path: the whole text NFKC'd (unless the quick check says it is NFKC), lower-cased, then the
    /// Unicode tokenizer.
    fn whole_text(version: u32, text: &str) -> String {
        if text.is_ascii() {
            return v(version, text);
        }
        let mut folded = String::new();
        if is_nfkc_quick(text.chars()) == IsNormalized::Yes {
            lower_into(text.chars(), &mut folded);
        } else {
            lower_into(text.nfkc(), &mut folded);
        }
        let mut out = String::new();
        if version == 1 {
            tokens_unicode(&folded, &mut out);
        } else {
            tokens_unicode_v2(&folded, &mut out);
        }
        out
    }

    /// Unicode-heavy text: ASCII words and separators (hyphens and line breaks among them) mixed
    /// with accented and combining, compatibility (ligatures, full-width, NBSP), unspaced (CJK,
    /// Thai), ignorable, Unicode hyphen, case-special (Turkish dotted I, final sigma, title case)
    /// characters and any character at all.
    fn unicode_heavy() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[a-zA-Z0-9]{1,8}",
            "[ \\-\n\t\r.,;'()_/]{1,3}",
            "[éÉèüÜßøÅñçÇ\u{301}\u{308}\u{327}\u{0307}]{1,3}",
            "[ﬁﬂﬃＡ-Ｚａ-ｚ０-９\u{A0}\u{2002}\u{3000}ｶﾀ①²½™]{1,3}",
            "[文字近似重复ひらがなカタカナก่อนहिन्दी한국어]{1,4}",
            "[\u{AD}\u{200B}\u{200D}\u{FEFF}\u{2010}\u{2011}—–’“”…]{1,2}",
            "[İıΣσςǅǄΩЖжё]{1,3}",
            "\\PC{1,3}",
            any::<char>().prop_map(String::from),
        ];
        prop::collection::vec(piece, 0..40).prop_map(|p| p.concat())
    }

    fn v(version: u32, text: &str) -> String {
        let mut out = String::new();
        normalize_into_version(version, text, &mut out);
        out
    }

    /// The normalizer as it was before its fast paths: NFKC of every non-ASCII text, lower-casing,
    /// then the tokenizers character by character.
    fn reference(version: u32, text: &str) -> String {
        if text.is_ascii() {
            return v(version, text);
        }
        let folded: String = text.nfkc().flat_map(char::to_lowercase).collect();
        let mut out = String::new();
        let mut at_gap = true;
        let mut i = 0;
        // Version 1 only (version 2's rules are compared through `v` on ASCII-only differences
        // below): a token is a run of alphanumerics, '-' + line break joins.
        if version == 1 {
            let cs: Vec<(usize, char)> = folded.char_indices().collect();
            while i < cs.len() {
                let c = cs[i].1;
                if c.is_alphanumeric() {
                    if at_gap && !out.is_empty() {
                        out.push(' ');
                    }
                    at_gap = false;
                    out.push(c);
                } else if !at_gap && c == '-' {
                    let mut j = i + 1;
                    let mut nl = false;
                    while j < cs.len() && cs[j].1.is_whitespace() {
                        nl |= cs[j].1 == '\n';
                        j += 1;
                    }
                    if nl && j < cs.len() && cs[j].1.is_alphanumeric() {
                        i = j;
                        continue;
                    }
                    at_gap = true;
                } else {
                    at_gap = true;
                }
                i += 1;
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// A non-ASCII text's ASCII stretches through the ASCII path and only the stretches around
        /// its non-ASCII characters through the Unicode path: the same output as the whole text
        /// through the Unicode path, in both versions.
        #[test]
        fn ascii_stretches_equal_the_whole_text_path(text in unicode_heavy()) {
            prop_assert_eq!(v(1, &text), whole_text(1, &text));
            prop_assert_eq!(v(2, &text), whole_text(2, &text));
        }

        /// The same on mostly-ASCII prose with a rare non-ASCII character (the common case).
        #[test]
        fn ascii_stretches_equal_the_whole_text_path_on_prose(
            text in "([a-zA-Z]{1,7}[ ,.\\-\n]{1,2}){0,12}[é’İﬁ\u{301}\u{2010}\u{AD}文\u{A0}]([ \\-\n.,]{0,2}[a-zA-Z]{1,7}){0,12}"
        ) {
            prop_assert_eq!(v(1, &text), whole_text(1, &text));
            prop_assert_eq!(v(2, &text), whole_text(2, &text));
        }
    }

    proptest! {
        /// The word-at-a-time search finds the first non-ASCII byte, as a byte-by-byte one does.
        #[test]
        fn next_non_ascii_finds_the_first_one(text in "[a-z é文\u{7f}]{0,40}", i in 0usize..48) {
            let b = text.as_bytes();
            let i = i.min(b.len());
            prop_assert_eq!(next_non_ascii(b, i), b[i..].iter().position(|&x| x >= 0x80).map(|p| i + p));
        }

        /// Version 1 with its fast paths (NFKC skipped where the quick check says the text is in
        /// NFKC, ASCII bytes without decoding) equals the character-by-character reference, on
        /// mostly-ASCII text with accented, compatibility, combining and hyphen characters.
        #[test]
        fn fast_paths_equal_the_reference(text in "[a-zA-Z0-9 \\-\n.,'éÉﬁ\u{301}\u{2010}Ωß’—İ]{0,80}") {
            prop_assert_eq!(v(1, &text), reference(1, &text));
        }

        /// Version 2's ASCII fast path changes nothing next to unspaced, mark and ignorable
        /// characters: the text with its ASCII letters turned into Cyrillic ones (which take the
        /// decoding path and are alphanumeric, spaced, not marks) normalizes to the same tokens with
        /// those letters turned back.
        #[test]
        fn version_2_ascii_path_equals_the_decoding_path(text in "[a-e0-9 \\-\n.,文字ก่\u{AD}\u{200B}é]{0,80}") {
            let to_cyr = |s: &str| s.chars().map(|c| match c { 'a'..='e' => char::from_u32(0x430 + (c as u32 - 'a' as u32)).unwrap_or(c), _ => c }).collect::<String>();
            let from_cyr = |s: &str| s.chars().map(|c| match c as u32 { 0x430..=0x434 => char::from_u32('a' as u32 + (c as u32 - 0x430)).unwrap_or(c), _ => c }).collect::<String>();
            prop_assert_eq!(v(2, &text), from_cyr(&v(2, &to_cyr(&text))));
        }

        /// The ASCII fast path gives the tokens of the general path on the lower-cased text.
        #[test]
        fn the_ascii_path_equals_the_unicode_path(text in "[a-zA-Z0-9 \\-\\n\\t.,'_]{0,80}") {
            let (mut fast, mut general) = (String::new(), String::new());
            tokens_ascii(&text, &mut fast);
            tokens_unicode(&text.to_lowercase(), &mut general);
            prop_assert_eq!(fast, general);
        }

        /// Both versions agree on every text without the characters of rules 5–8 (drawn from Latin,
        /// Greek, Cyrillic, accented letters, digits, punctuation and line breaks).
        #[test]
        fn versions_agree_where_rules_5_to_8_name_no_character(text in "[a-zA-Zé ÜßΩжё0-9\\-\n.,'ﬁ]{0,60}") {
            prop_assert_eq!(v(1, &text), v(2, &text));
        }
    }

    #[test]
    fn unspaced_scripts_give_one_token_per_character_in_version_2() {
        assert_eq!(v(2, "近似重复文档检测。"), "近 似 重 复 文 档 检 测");
        assert_eq!(v(1, "近似重复文档检测。"), "近似重复文档检测");
        // Mixed with spaced words and digits: those stay whole.
        assert_eq!(v(2, "SimHash指纹2024年"), "simhash 指 纹 2024 年");
        assert_eq!(v(2, "ひらがなとカタカナ"), "ひ ら が な と カ タ カ ナ");
        // Half-width Katakana folds (NFKC) to the full-width letters.
        assert_eq!(v(2, "ｶﾀｶﾅ"), v(2, "カタカナ"));
        // Hangul is written with spaces: its words stay whole.
        assert_eq!(v(2, "한국어 문서"), "한국어 문서");
    }

    #[test]
    fn combining_marks_stay_in_their_token_in_version_2() {
        // Devanagari: the virama (U+094D, not alphabetic) split the word in version 1.
        assert_eq!(v(1, "हिन्दी"), "हिन दी");
        assert_eq!(v(2, "हिन्दी"), "हिन्दी");
        // Thai: a consonant keeps its vowel and tone marks (U+0E48 is not alphabetic).
        assert_eq!(v(2, "ก่อน"), "ก่ อ น");
    }

    #[test]
    fn ignorable_characters_are_dropped_in_version_2() {
        assert_eq!(v(2, "repre\u{AD}sentation"), "representation");
        assert_eq!(v(1, "repre\u{AD}sentation"), "repre sentation");
        assert_eq!(v(2, "finger\u{200B}print \u{FEFF}data"), "fingerprint data");
        assert_eq!(v(2, "\u{AD}\u{200D}"), "");
    }

    #[test]
    fn version_2_joins_at_unicode_hyphens_before_a_line_break() {
        assert_eq!(v(2, "finger\u{2010}\nprint"), "fingerprint");
        assert_eq!(v(2, "finger\u{AD}\r\n print"), "fingerprint");
        assert_eq!(v(1, "finger\u{2010}\nprint"), "finger print");
        // Not before a line break: a hyphen separates, a soft hyphen disappears.
        assert_eq!(v(2, "data\u{2010}set"), "data set");
        assert_eq!(v(2, "data\u{AD} set"), "data set");
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
