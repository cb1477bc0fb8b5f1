//! The reader's tests: JSONL lines (the fast path against serde), WARC streams, directories.

use super::*;

/// The parse before the field-by-field reader: the whole line as a `serde_json::Value`.
fn parse_as_value(line: &[u8], key_field: &str, text_field: &str) -> Result<NewDoc, String> {
    let s = std::str::from_utf8(line).map_err(|_| "utf8".to_string())?;
    let v: serde_json::Value = serde_json::from_str(s).map_err(|e| format!("malformed JSON: {e}"))?;
    let serde_json::Value::Object(mut obj) = v else {
        return Err("expected a JSON object".into());
    };
    let key = match obj.remove(key_field) {
        Some(serde_json::Value::String(k)) => k,
        Some(serde_json::Value::Number(n)) => n.to_string(),
        Some(other) => return Err(format!("field {key_field:?} must be a string, found {}", kind(&other))),
        None => return Err(format!("missing field {key_field:?}")),
    };
    let text = match obj.remove(text_field) {
        Some(serde_json::Value::String(t)) => t,
        Some(other) => return Err(format!("field {text_field:?} must be a string, found {}", kind(&other))),
        None => return Err(format!("missing field {text_field:?}")),
    };
    let biblio = biblio_fields(&obj)?;
    let meta = (!obj.is_empty()).then(|| serde_json::Value::Object(obj).to_string());
    Ok(NewDoc { key, text, meta, biblio })
}

#[test]
fn the_field_by_field_parse_equals_the_whole_value_parse() {
    let lines: &[&str] = &[
        r#"{"key": "a", "text": "one two three"}"#,
        r#"  {"text": "t", "key": 17}"#,
        r#"{"key": "a", "text": "first", "text": "last wins", "key": "b"}"#,
        r#"{"k\u0065y": "escaped name", "te\u0078t": "x y z", "n\u00e4me": 1}"#,
        r#"{"key": "m", "text": "t", "source": {"url": "http://x", "tags": [1, "two", null]}, "a": true}"#,
        r#"{"key": "b", "text": "t", "title": "A Title", "year": "2019", "doi": "10.1/x"}"#,
        r#"{"key": "b", "text": "t", "title": null, "year": 2020}"#,
        r#"{"key": "b", "text": "t", "year": 20.5}"#,
        r#"{"key": "b", "text": "t", "title": 5}"#,
        r#"{"key": [1], "text": "t"}"#,
        r#"{"key": "a", "text": {"x": 1}}"#,
        r#"{"key": "a"}"#,
        r#"{"text": "a"}"#,
        r#"{"key": "a", "text": "t"} trailing"#,
        r#"{"key": "a", "text": "t""#,
        r#"{"key": "a", "text": "bad \q escape"}"#,
        r#"{}"#,
        r#"[1, 2]"#,
        r#""just a string""#,
        r#"not json"#,
        r#"{"key": "a", "text": "t", "body": "b"}"#,
    ];
    for (key_field, text_field) in [("key", "text"), ("id", "body")] {
        for line in lines {
            let want = parse_as_value(line.as_bytes(), key_field, text_field);
            let got = parse_line(line.as_bytes(), || "in line 1".to_string(), key_field, text_field);
            match (&want, &got) {
                (Ok(w), Ok(g)) => {
                    assert_eq!((&w.key, &w.text, &w.meta), (&g.key, &g.text, &g.meta), "{line}");
                    assert_eq!(format!("{:?}", w.biblio), format!("{:?}", g.biblio), "{line}");
                }
                (Err(w), Err(g)) => {
                    let g = g.to_string();
                    assert!(g.contains("in line 1"), "{line}: {g}");
                    assert!(g.contains(w.as_str()), "{line}: expected {w:?} in {g:?}");
                }
                _ => panic!("{line} ({key_field}, {text_field}): value parse {want:?}, field parse {got:?}"),
            }
        }
    }
}

#[test]
fn the_origin_log_holds_only_the_items_not_yet_reported() {
    let origins = Origins::default();
    let mut log = lock(&origins);
    log.name = "in.jsonl".into();
    for line in 1..=10 {
        log.push(Origin::Line(line));
    }
    assert_eq!(log.take(0).as_deref(), Some("in.jsonl line 1"));
    // Items 1 and 2 never asked for (e.g. reported without an origin): dropped on the way.
    assert_eq!(log.take(3).as_deref(), Some("in.jsonl line 4"));
    assert_eq!(log.held.len(), 6);
    assert_eq!(log.take(3), None, "each item is taken once");
    assert_eq!(log.take(9).as_deref(), Some("in.jsonl line 10"));
    assert!(log.held.is_empty());
    assert_eq!(log.take(10), None);
    log.push(Origin::File(PathBuf::from("dir/a.txt")));
    assert_eq!(log.take(10).as_deref(), Some("dir/a.txt"));
}

#[test]
fn a_long_jsonl_stream_keeps_the_origin_log_flat() {
    let mut input = String::new();
    for i in 0..5_000 {
        if i % 1_000 == 999 {
            input.push_str("{bad\n\n");
        } else {
            input.push_str(&format!("{{\"key\": \"k{i}\", \"text\": \"some words {i}\"}}\n"));
        }
    }
    let origins = Origins::default();
    let items = jsonl(
        std::io::Cursor::new(input.into_bytes()),
        "s".into(),
        "key".into(),
        "text".into(),
        Some(origins.clone()),
    )
    .unwrap();
    let mut most = 0;
    for (seq, item) in items.enumerate() {
        let o = lock(&origins).take(seq as u64);
        most = most.max(lock(&origins).held.len());
        // Blank lines are skipped but counted: item seq is on line seq + 1 + (bad lines before it).
        let line = seq + 1 + seq / 1_000;
        assert_eq!(o, Some(format!("s line {line}")));
        assert_eq!(item.is_err(), seq % 1_000 == 999, "item {seq}");
    }
    assert_eq!(most, 0, "each origin is taken as its item is reported");
}

#[test]
fn a_line_over_the_cap_is_rejected_with_its_number_and_skipped() {
    let long = format!("{{\"key\": \"big\", \"text\": \"{}\"}}", "word ".repeat(200));
    for tail in ["\n", ""] {
        let input = format!("{{\"key\": \"a\", \"text\": \"one two\"}}\n{long}{tail}{{\"key\": \"b\", \"text\": \"three\"}}\n");
        // Without a newline after it the long line runs to the end of the input.
        let items: Vec<_> = jsonl_capped(
            std::io::Cursor::new(input.into_bytes()),
            "s".into(),
            "key".into(),
            "text".into(),
            None,
            100,
        )
        .unwrap()
        .collect();
        assert_eq!(items.len(), if tail.is_empty() { 2 } else { 3 }, "{tail:?}");
        assert_eq!(items[0].as_ref().unwrap().key, "a");
        let e = items[1].as_ref().unwrap_err().to_string();
        assert!(e.contains("s line 2") && e.contains("over 100 bytes"), "{e}");
        if !tail.is_empty() {
            assert_eq!(items[2].as_ref().unwrap().key, "b");
        }
    }
    // A line of exactly the cap (newline aside) is read.
    let line = format!("{{\"key\": \"c\", \"text\": \"{}\"}}", "x".repeat(50));
    let cap = line.len();
    let items: Vec<_> = jsonl_capped(
        std::io::Cursor::new(format!("{line}\n").into_bytes()),
        "s".into(),
        "key".into(),
        "text".into(),
        None,
        cap,
    )
    .unwrap()
    .collect();
    assert_eq!(items[0].as_ref().unwrap().key, "c");
}
