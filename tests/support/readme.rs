//! Reading the README's samples for the tests that check them (cli/tests/cli/readme.rs: the
//! shell session; cli/tests/serve.rs: the HTTP example): ```console blocks of `$ command` lines, each followed
//! by the output it must print; JSON compared as JSON without the fields that differ from run to run
//! (`took_us`, `inserted_at_ms`); `…` in a line matches any text there.
#![allow(dead_code)]

use serde_json::Value;

/// The ```console blocks of a Markdown text, as (command, expected output lines) lists.
pub fn console_blocks(md: &str) -> Vec<Vec<(String, Vec<String>)>> {
    let mut blocks = Vec::new();
    let mut in_block = false;
    let mut cur: Vec<(String, Vec<String>)> = Vec::new();
    for line in md.lines() {
        if !in_block {
            in_block = line.trim_end() == "```console";
            continue;
        }
        if line.trim_end() == "```" {
            in_block = false;
            blocks.push(std::mem::take(&mut cur));
        } else if let Some(cmd) = line.strip_prefix("$ ") {
            cur.push((cmd.to_string(), Vec::new()));
        } else if let Some(last) = cur.last_mut() {
            last.1.push(line.to_string());
        }
    }
    blocks
}

/// A JSON value without the fields that differ between runs.
pub fn stable(mut v: Value) -> Value {
    match &mut v {
        Value::Object(m) => {
            m.remove("took_us");
            m.remove("inserted_at_ms");
            for x in m.values_mut() {
                *x = stable(x.take());
            }
        }
        Value::Array(a) => {
            for x in a.iter_mut() {
                *x = stable(x.take());
            }
        }
        _ => {}
    }
    v
}

/// Whether an output line is what the README says (`…`: any text there; JSON: as JSON).
pub fn line_matches(want: &str, got: &str) -> bool {
    if want.starts_with('{') {
        if let (Ok(w), Ok(g)) = (serde_json::from_str::<Value>(want), serde_json::from_str::<Value>(got)) {
            return stable(w) == stable(g);
        }
    }
    let parts: Vec<&str> = want.split('…').collect();
    if parts.len() == 1 {
        return want == got;
    }
    // Each part in order: the first at the start, the last at the end.
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !got.starts_with(first) || !got[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &got[first.len()..got.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
}
