//! `fpdb serve` end to end: the server runs as a process on an ephemeral loopback port
//! (`--listen 127.0.0.1:0`, bound address read from its stdout); every endpoint, every error code,
//! the token rules, the logs and the graceful shutdown are exercised over real HTTP.

#[path = "../../tests/common/mod.rs"]
mod common;
#[path = "../../tests/support/http.rs"]
mod http;
#[path = "../../tests/support/readme.rs"]
mod readme_md;
#[path = "../../tests/support/cli.rs"]
mod support;

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};

use common::{edit, passage, text, vocab};
use http::{encode_segment, request, Conn, Resp};
use serde_json::{json, Value};
use support::gzip;

/// The binary under test: this build's, or `FPDB_TEST_BIN` (to run these tests against another
/// build, e.g. the one before a fix, and see them fail).
fn fpdb_bin() -> String {
    std::env::var("FPDB_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_fpdb").to_string())
}

struct Server {
    child: Child,
    addr: SocketAddr,
    stderr: PathBuf,
}

impl Server {
    fn start(db: &Path, extra: &[&str]) -> Server {
        Server::start_env(db, extra, &[])
    }

    fn start_env(db: &Path, extra: &[&str], env: &[(&str, &str)]) -> Server {
        let stderr = PathBuf::from(format!("{}.serve-{}.log", db.display(), rand_suffix()));
        let mut child = Command::new(fpdb_bin())
            .envs(env.iter().copied())
            .arg("serve")
            .arg(db)
            .args(["--listen", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::from(File::create(&stderr).unwrap()))
            .spawn()
            .expect("spawn fpdb serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let addr = line
            .trim()
            .strip_prefix("fpdb serve: listening on http://")
            .unwrap_or_else(|| {
                panic!(
                    "no address line; stdout {line:?}; stderr {}",
                    std::fs::read_to_string(&stderr).unwrap_or_default()
                )
            })
            .parse()
            .unwrap();
        Server { child, addr, stderr }
    }

    fn req(&self, method: &str, path: &str, body: &[u8]) -> Resp {
        request(self.addr, method, path, &[], body).unwrap()
    }

    fn req_auth(&self, method: &str, path: &str, token: &str, body: &[u8]) -> Resp {
        request(self.addr, method, path, &[("Authorization", &format!("Bearer {token}"))], body).unwrap()
    }

    /// SIGTERM, then the exit status.
    fn stop(mut self) -> (ExitStatus, String) {
        let st = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().unwrap();
        assert!(st.success());
        let status = self.child.wait().unwrap();
        let log = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        (status, log)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

fn body_json(r: &Resp) -> Value {
    serde_json::from_slice(&r.body).unwrap_or_else(|e| panic!("status {} body not JSON ({e}): {}", r.status, r.text()))
}

/// Asserts an error answer: status, stable code, JSON content type.
fn assert_error(r: &Resp, status: u16, code: &str) {
    assert_eq!(r.status, status, "expected {status} {code}, got {}: {}", r.status, r.text());
    assert_eq!(r.header("content-type"), Some("application/json"));
    let v = body_json(r);
    assert_eq!(v["error"]["code"], code, "{v}");
    assert!(v["error"]["message"].as_str().is_some_and(|m| m.len() > 10), "{v}");
}

fn put(s: &Server, key: &str, body: Value) -> Resp {
    s.req(
        "PUT",
        &format!("/v1/documents/{}", encode_segment(key)),
        body.to_string().as_bytes(),
    )
}

fn docs() -> (String, String, String, String) {
    let v = vocab();
    let base = passage(&v, 150, 1);
    let near = edit(&v, &base, 2, 7);
    (text(&base), text(&near), text(&passage(&v, 150, 2)), text(&passage(&v, 150, 3)))
}

#[test]
fn every_endpoint_and_error_code() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let s = Server::start(&db, &["--max-body-bytes", "65536"]);
    let (base, near, other, third) = docs();

    // healthz
    let r = s.req("GET", "/healthz", b"");
    assert_eq!(r.status, 200);
    assert_eq!(body_json(&r), json!({"status": "ok"}));

    // PUT: the first document, with metadata.
    let r = put(
        &s,
        "paper/1",
        json!({"text": base, "title": "Near-Duplicates: A Study", "year": 2019, "doi": "10.1145/ABC.1", "meta": {"source": "arxiv"}}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let v = body_json(&r);
    assert_eq!(v["key"], "paper/1");
    assert_eq!(v["stored"], true);
    assert_eq!(v["duplicates"], json!([]));
    assert_eq!(v["group"]["size"], 1);
    let id1 = v["id"].as_u64().unwrap();

    // A near-duplicate text: a verified text match; joins the group.
    let r = put(&s, "paper/2", json!({"text": near}));
    let v = body_json(&r);
    assert_eq!(r.status, 200, "{v}");
    assert_eq!(v["duplicates"][0]["key"], "paper/1");
    assert_eq!(v["duplicates"][0]["match"], "text");
    assert!(v["duplicates"][0]["jaccard"].as_f64().unwrap() >= 0.9);
    assert_eq!(v["group"]["id"], id1);
    assert_eq!(v["group"]["size"], 2);

    // A different text with the same DOI in another spelling: a DOI match, reported, not linked.
    let r = put(&s, "paper/3", json!({"text": other, "doi": "https://doi.org/10.1145/abc.1"}));
    let v = body_json(&r);
    assert_eq!(v["duplicates"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["duplicates"][0]["key"], "paper/1");
    assert_eq!(v["duplicates"][0]["match"], "doi");
    assert!(v["duplicates"][0]["jaccard"].as_f64().unwrap() < 0.5);
    assert_eq!(v["group"]["size"], 1);

    // Same title (other punctuation and case) and year: a title_year match.
    let r = put(
        &s,
        "paper/4",
        json!({"text": third, "title": "near duplicates -- a STUDY", "year": 2019}),
    );
    let v = body_json(&r);
    assert_eq!(v["duplicates"][0]["key"], "paper/1", "{v}");
    assert_eq!(v["duplicates"][0]["match"], "title_year");

    // dedup=skip: a near-duplicate is reported, not stored.
    let r = s.req(
        "PUT",
        "/v1/documents/paper%2F5?dedup=skip",
        json!({"text": near}).to_string().as_bytes(),
    );
    let v = body_json(&r);
    assert_eq!(r.status, 200);
    assert_eq!(v["stored"], false);
    assert_eq!(v["id"], Value::Null);
    assert_eq!(v["group"], Value::Null);
    assert_eq!(v["duplicates"].as_array().unwrap().len(), 2);

    // A key with a slash and non-ASCII, percent-encoded.
    let r = put(
        &s,
        "dir/kéy ü",
        json!({"text": "a small document about something else entirely, nothing alike"}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(body_json(&r)["key"], "dir/kéy ü");
    let r = s.req("GET", &format!("/v1/documents/{}", encode_segment("dir/kéy ü")), b"");
    assert_eq!(body_json(&r)["key"], "dir/kéy ü");

    // POST /v1/duplicates: text hits first, then metadata-only hits, each with its match kind.
    let r = s.req(
        "POST",
        "/v1/duplicates",
        json!({"text": base, "doi": "doi:10.1145/ABC.1", "title": "Near duplicates, a study", "year": 2019})
            .to_string()
            .as_bytes(),
    );
    let v = body_json(&r);
    assert_eq!(r.status, 200, "{v}");
    let hits: Vec<(String, String)> = v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["key"].as_str().unwrap().to_string(), h["match"].as_str().unwrap().to_string()))
        .collect();
    let expect: Vec<(String, String)> = [
        ("paper/1", "text"),
        ("paper/2", "text"),
        ("paper/3", "doi"),
        ("paper/4", "title_year"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(hits, expect);
    assert!(v["took_us"].is_u64());
    let r = s.req(
        "POST",
        "/v1/duplicates",
        json!({"text": base, "limit": 1, "max_distance": 3, "min_jaccard": 0.95})
            .to_string()
            .as_bytes(),
    );
    assert_eq!(body_json(&r)["hits"].as_array().unwrap().len(), 1);

    // GET a document: text is not returned; metadata is.
    let r = s.req("GET", "/v1/documents/paper%2F1", b"");
    let v = body_json(&r);
    assert_eq!(r.status, 200);
    assert_eq!(v["id"], id1);
    assert_eq!(v["title"], "Near-Duplicates: A Study");
    assert_eq!(v["year"], 2019);
    assert_eq!(v["doi"], "10.1145/ABC.1");
    assert_eq!(v["meta"], json!({"source": "arxiv"}));
    assert_eq!(v["group"]["size"], 2);
    assert!(v["simhash"].as_str().unwrap().starts_with("0x"));
    assert!(v.get("text").is_none());

    // GET a group.
    let r = s.req("GET", &format!("/v1/groups/{id1}"), b"");
    let v = body_json(&r);
    assert_eq!(r.status, 200, "{v}");
    assert_eq!(v["canonical"], "paper/1");
    assert_eq!(v["size"], 2);
    assert_eq!(v["members"][1]["key"], "paper/2");
    assert_error(&s.req("GET", "/v1/groups/987654", b""), 404, "group_not_found");
    assert_error(&s.req("GET", "/v1/groups/abc", b""), 400, "invalid_path");
    // A non-canonical member's id is not a group id.
    let id2 = body_json(&s.req("GET", "/v1/documents/paper%2F2", b""))["id"].as_u64().unwrap();
    assert_error(&s.req("GET", &format!("/v1/groups/{id2}"), b""), 404, "group_not_found");

    // DELETE, then 404s.
    let r = s.req("DELETE", "/v1/documents/paper%2F2", b"");
    assert_eq!(r.status, 200);
    assert_eq!(body_json(&r), json!({"key": "paper/2", "deleted": true}));
    assert_error(&s.req("DELETE", "/v1/documents/paper%2F2", b""), 404, "document_not_found");
    assert_error(&s.req("GET", "/v1/documents/paper%2F2", b""), 404, "document_not_found");

    // POST /v1/documents (NDJSON): a line that is not the documented JSON rejects the request.
    let bad = format!("{}\n\nnot json\n", json!({"key": "bulk/0", "text": other}));
    let r = s.req("POST", "/v1/documents", bad.as_bytes());
    assert_error(&r, 400, "invalid_json");
    assert!(body_json(&r)["error"]["message"].as_str().unwrap().contains("line 3"));
    let bad = format!("{}\n", json!({"key": "bulk/0", "text": other, "extra": 1}));
    assert_error(&s.req("POST", "/v1/documents", bad.as_bytes()), 400, "invalid_json");
    assert_error(&s.req("POST", "/v1/documents", b"\n \n"), 400, "invalid_json");
    assert_error(&s.req("GET", "/v1/documents/bulk%2F0", b""), 404, "document_not_found");
    // One result line per document, in order, with line numbers; a document that cannot be stored
    // gets its own error line.
    let nd = format!(
        "{}\n\n{}\n{}\n",
        json!({"key": "bulk/1", "text": other, "doi": "10.1145/abc.1"}),
        json!({"key": "bulk/2", "text": near, "title": "x", "year": 1.0}),
        json!({"key": "bulk/3", "text": " ,, "}),
    );
    let r = s.req("POST", "/v1/documents", nd.as_bytes());
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("application/x-ndjson"));
    let lines: Vec<Value> = r.text().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3, "{}", r.text());
    assert_eq!(lines.iter().map(|l| l["line"].as_u64().unwrap()).collect::<Vec<_>>(), vec![1, 3, 4]);
    assert_eq!(lines[0]["stored"], true);
    assert_eq!(lines[0]["duplicates"][0]["key"], "paper/3", "{}", lines[0]);
    assert_eq!(lines[1]["duplicates"][0]["key"], "paper/1");
    assert_eq!(lines[2]["error"]["code"], "invalid_document");

    // Stats.
    let r = s.req("GET", "/v1/stats", b"");
    let v = body_json(&r);
    assert_eq!(v["docs"], 6, "{v}");
    assert_eq!(v["max_distance"], 12);

    // Errors with stable codes.
    assert_error(&s.req("PUT", "/v1/documents/k", b"{not json"), 400, "invalid_json");
    assert_error(
        &s.req("PUT", "/v1/documents/k", br#"{"text": "hello world", "titel": "typo"}"#),
        400,
        "invalid_json",
    );
    assert_error(&s.req("PUT", "/v1/documents/k", br#"{"text": 5}"#), 400, "invalid_json");
    assert_error(&s.req("PUT", "/v1/documents/k", br#"{"text": " .. "}"#), 400, "invalid_document");
    assert_error(
        &s.req("PUT", "/v1/documents/k", br#"{"text": "hello world", "doi": "not a doi"}"#),
        400,
        "invalid_document",
    );
    assert_error(
        &s.req("PUT", "/v1/documents/k", br#"{"text": "hello world", "year": 12345}"#),
        400,
        "invalid_document",
    );
    assert_error(
        &s.req("PUT", "/v1/documents/k?dedup=maybe", br#"{"text": "hello world"}"#),
        400,
        "invalid_parameter",
    );
    assert_error(
        &s.req("POST", "/v1/duplicates", br#"{"text": "hello world", "max_distance": 99}"#),
        400,
        "invalid_parameter",
    );
    assert_error(
        &s.req("POST", "/v1/duplicates", br#"{"text": "hello world", "min_jaccard": 2}"#),
        400,
        "invalid_parameter",
    );
    assert_error(&s.req("GET", "/v1/documents/%FF", b""), 400, "invalid_path");
    assert_error(&s.req("GET", "/v1/nothing", b""), 404, "not_found");
    assert_error(&s.req("POST", "/v1/stats", b""), 405, "method_not_allowed");
    let big = json!({"text": "word ".repeat(20_000)}).to_string();
    assert_error(&s.req("PUT", "/v1/documents/big", big.as_bytes()), 413, "body_too_large");
    assert_error(&s.req("POST", "/v1/duplicates", big.as_bytes()), 413, "body_too_large");
    assert_error(&s.req("GET", "/v1/documents/big", b""), 404, "document_not_found");

    // Metrics: requests by route template (never keys), latencies, errors by code, documents.
    let r = s.req("GET", "/metrics", b"");
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").unwrap().starts_with("text/plain"));
    let m = r.text();
    for needle in [
        "fpdb_http_requests_total{route=\"/v1/documents/{key}\",method=\"PUT\",status=\"200\"}",
        "fpdb_http_request_duration_seconds_bucket{route=\"/v1/duplicates\",le=\"+Inf\"}",
        "fpdb_http_errors_total{code=\"invalid_json\"}",
        "fpdb_http_errors_total{code=\"body_too_large\"} 2",
        "fpdb_documents 6",
        "fpdb_writer_batches_total",
        "fpdb_bulk_documents_total 2",
    ] {
        assert!(m.contains(needle), "metrics lack {needle}:\n{m}");
    }
    assert!(!m.contains("paper/1"), "a key leaked into the metrics");

    // OpenAPI: every endpoint, generated from the code.
    let r = s.req("GET", "/openapi.json", b"");
    let v = body_json(&r);
    assert!(v["openapi"].as_str().unwrap().starts_with("3."));
    for (path, method) in [
        ("/v1/documents/{key}", "put"),
        ("/v1/documents/{key}", "get"),
        ("/v1/documents/{key}", "delete"),
        ("/v1/documents", "post"),
        ("/v1/duplicates", "post"),
        ("/v1/groups/{id}", "get"),
        ("/v1/stats", "get"),
        ("/healthz", "get"),
        ("/metrics", "get"),
        ("/openapi.json", "get"),
    ] {
        assert!(v["paths"][path][method].is_object(), "openapi lacks {method} {path}");
    }
    assert!(v["components"]["schemas"]["DocumentIn"].is_object());
    // The counters' schema is one object, and a /v1/stats answer holds every field it requires
    // (`best_tables`, which the HTTP view leaves out, is not among them).
    let counters = &v["components"]["schemas"]["Counters"];
    assert_eq!(counters["type"], "object", "{counters}");
    let stats = body_json(&s.req("GET", "/v1/stats", b""));
    for field in counters["required"].as_array().unwrap() {
        let field = field.as_str().unwrap();
        assert!(
            stats.get(field).is_some(),
            "/v1/stats lacks {field}, which the schema requires: {stats}"
        );
    }

    let (status, log) = s.stop();
    assert!(status.success(), "{status:?}\n{log}");
    assert!(log.contains("stopped cleanly"), "{log}");
}

#[test]
fn bulk_slots_answer_429_with_retry_after() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&dir.path().join("db"), &["--bulk-slots", "1"]);
    // The first bulk request holds the only slot while its body is still arriving.
    let line = format!("{}\n", json!({"key": "a", "text": "one small document here"}));
    let head = format!(
        "POST /v1/documents HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{}",
        line.len() * 2,
        line
    );
    let start_slow = || {
        let mut c = Conn::connect(s.addr).unwrap();
        c.write_raw(head.as_bytes()).unwrap();
        c
    };
    let mut slow = start_slow();
    // Wait until the server holds the slot (the second request is refused), bounded. If the slow
    // request reached the server while a probe held the slot, it was answered (refused) itself:
    // start it again.
    let mut refused = None;
    for _ in 0..200 {
        let r = s.req("POST", "/v1/documents", line.as_bytes());
        if r.status == 429 {
            refused = Some(r);
            break;
        }
        if slow.answered_within(std::time::Duration::from_millis(1)).unwrap() {
            slow = start_slow();
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let r = refused.expect("the second bulk request was never refused");
    assert_error(&r, 429, "queue_full");
    assert_eq!(r.header("retry-after"), Some("1"));
    // Finishing the first body releases the slot.
    slow.write_raw(line.as_bytes()).unwrap();
    let r = slow.read_response().unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.text().lines().count(), 2);
    let r = s.req(
        "POST",
        "/v1/documents",
        format!("{}\n", json!({"key": "b", "text": "another small document"})).as_bytes(),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let m = s.req("GET", "/metrics", b"").text();
    assert!(m.contains("fpdb_http_errors_total{code=\"queue_full\"}"), "{m}");
}

#[test]
fn gzip_bodies_are_decompressed_within_the_limits_and_other_codings_refused() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&dir.path().join("db"), &["--max-body-bytes", "20000", "--max-bulk-bytes", "60000"]);
    let (base, near, other, _) = docs();
    let gz = [("Content-Encoding", "gzip")];
    // PUT, gzip: stored as the plain text would be.
    let r = request(
        s.addr,
        "PUT",
        "/v1/documents/a",
        &gz,
        &gzip(json!({"text": base}).to_string().as_bytes()),
    )
    .unwrap();
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(body_json(&r)["stored"], true);
    // NDJSON bulk as a two-member gzip stream (x-gzip): every line, in order.
    let mut bulk = gzip(format!("{}\n", json!({"key": "b", "text": near})).as_bytes());
    bulk.extend(gzip(format!("{}\n", json!({"key": "c", "text": other})).as_bytes()));
    let r = request(s.addr, "POST", "/v1/documents", &[("Content-Encoding", "x-gzip")], &bulk).unwrap();
    assert_eq!(r.status, 200, "{}", r.text());
    let lines: Vec<Value> = r.text().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "{}", r.text());
    assert_eq!(
        (lines[0]["key"].as_str(), lines[0]["duplicates"][0]["key"].as_str()),
        (Some("b"), Some("a"))
    );
    assert_eq!(lines[1]["key"], "c");
    // A gzip query finds the same hit as the plain one.
    let q = json!({"text": base}).to_string();
    let plain = body_json(&s.req("POST", "/v1/duplicates", q.as_bytes()));
    let r = request(s.addr, "POST", "/v1/duplicates", &gz, &gzip(q.as_bytes())).unwrap();
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(body_json(&r)["hits"], plain["hits"]);
    assert_eq!(plain["hits"][0]["key"], "a");
    // A small body that inflates past the limit: 413, as sent it was well under.
    let bomb = gzip(json!({"text": "word ".repeat(50_000)}).to_string().as_bytes());
    assert!(bomb.len() < 2_000, "{}", bomb.len());
    assert_error(
        &request(s.addr, "PUT", "/v1/documents/bomb", &gz, &bomb).unwrap(),
        413,
        "body_too_large",
    );
    let bulk_bomb = gzip(
        format!("{}\n", json!({"key": "x", "text": "word ".repeat(20_000)}))
            .repeat(2)
            .as_bytes(),
    );
    assert_error(
        &request(s.addr, "POST", "/v1/documents", &gz, &bulk_bomb).unwrap(),
        413,
        "body_too_large",
    );
    // Not gzip, truncated gzip: 400; other codings: 415. Nothing of these was stored.
    let q = json!({"text": other}).to_string();
    assert_error(
        &request(s.addr, "PUT", "/v1/documents/d", &gz, q.as_bytes()).unwrap(),
        400,
        "invalid_encoding",
    );
    let cut = gzip(q.as_bytes());
    assert_error(
        &request(s.addr, "PUT", "/v1/documents/d", &gz, &cut[..cut.len() / 2]).unwrap(),
        400,
        "invalid_encoding",
    );
    for coding in ["br", "deflate", "gzip, br"] {
        let r = request(s.addr, "POST", "/v1/duplicates", &[("Content-Encoding", coding)], q.as_bytes()).unwrap();
        assert_error(&r, 415, "unsupported_encoding");
    }
    assert_eq!(body_json(&s.req("GET", "/v1/stats", b""))["docs"], 3);
    // identity is the body as sent.
    let r = request(s.addr, "POST", "/v1/duplicates", &[("Content-Encoding", "identity")], q.as_bytes()).unwrap();
    assert_eq!(body_json(&r)["hits"][0]["key"], "c");
}

#[test]
fn tokens_guard_writes_and_optionally_reads() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let token_file = dir.path().join("token");
    let token = "s3cret-token-0123456789abcdef";
    std::fs::write(&token_file, format!("{token}\n")).unwrap();
    let tf = token_file.display().to_string();

    let s = Server::start(&db, &["--token-file", &tf]);
    let doc = json!({"text": "a document that needs a token to be written"}).to_string();
    let r = s.req("PUT", "/v1/documents/k", doc.as_bytes());
    assert_error(&r, 401, "unauthorized");
    assert!(r.header("www-authenticate").unwrap().starts_with("Bearer"));
    assert_error(
        &s.req_auth("PUT", "/v1/documents/k", "s3cret-token-0123456789abcdeX", doc.as_bytes()),
        401,
        "unauthorized",
    );
    assert_error(&s.req_auth("PUT", "/v1/documents/k", "s3cret", doc.as_bytes()), 401, "unauthorized");
    assert_error(
        &s.req(
            "POST",
            "/v1/documents",
            format!("{}\n", json!({"key": "b", "text": "x y z"})).as_bytes(),
        ),
        401,
        "unauthorized",
    );
    assert_eq!(s.req_auth("PUT", "/v1/documents/k", token, doc.as_bytes()).status, 200);
    // Reads are open without --token-for-reads.
    assert_eq!(s.req("GET", "/v1/documents/k", b"").status, 200);
    assert_eq!(s.req("POST", "/v1/duplicates", doc.as_bytes()).status, 200);
    assert_eq!(s.req("GET", "/v1/stats", b"").status, 200);
    assert_error(&s.req("DELETE", "/v1/documents/k", b""), 401, "unauthorized");
    assert_eq!(s.req("GET", "/v1/documents/k", b"").status, 200, "an unauthorized DELETE deleted");
    let (st, _) = s.stop();
    assert!(st.success());

    let s = Server::start(&db, &["--token-file", &tf, "--token-for-reads"]);
    assert_error(&s.req("GET", "/v1/documents/k", b""), 401, "unauthorized");
    assert_error(&s.req("POST", "/v1/duplicates", doc.as_bytes()), 401, "unauthorized");
    assert_error(&s.req("GET", "/metrics", b""), 401, "unauthorized");
    assert_eq!(s.req("GET", "/healthz", b"").status, 200);
    assert_eq!(s.req_auth("GET", "/v1/documents/k", token, b"").status, 200);
    assert_eq!(s.req_auth("DELETE", "/v1/documents/k", token, b"").status, 200);
    let (st, _) = s.stop();
    assert!(st.success());
}

#[test]
fn refuses_bad_listen_and_token_settings() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let run = |args: &[&str]| Command::new(fpdb_bin()).arg("serve").arg(&db).args(args).output().unwrap();
    // Any non-loopback address without a token is refused before binding (exit 2).
    let o = run(&["--listen", "0.0.0.0:0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--token-file"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let short = dir.path().join("short");
    std::fs::write(&short, "abc").unwrap();
    let o = run(&["--listen", "127.0.0.1:0", "--token-file", &short.display().to_string()]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["--listen", "127.0.0.1:0", "--token-for-reads"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn document_text_is_never_logged() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&dir.path().join("db"), &["--log-requests"]);
    let marker = "zqxjvwkmarker";
    let t = format!("the secret text {marker} must never appear in any log line of the server at all");
    // A key with a `-`: the log's database path (a temporary directory of random letters and
    // digits, e.g. `/tmp/.tmpLk1XFn`) cannot contain it by chance, as it could contain `k1`.
    let key = "secret-key-1";
    assert_eq!(put(&s, key, json!({"text": t})).status, 200);
    assert_eq!(
        s.req("POST", "/v1/duplicates", json!({"text": t}).to_string().as_bytes()).status,
        200
    );
    assert_eq!(
        s.req("POST", "/v1/documents", format!("{}\n", json!({"key": "k2", "text": t})).as_bytes())
            .status,
        200
    );
    // Errors too: a bad body and a bad DOI next to the text.
    assert_eq!(put(&s, "k3", json!({"text": t, "doi": "nope"})).status, 400);
    assert_eq!(
        s.req("PUT", "/v1/documents/k4", format!("{{\"text\": \"{marker}").as_bytes())
            .status,
        400
    );
    let (st, log) = s.stop();
    assert!(st.success());
    assert!(log.contains("PUT /v1/documents/{key} 200"), "{log}");
    assert!(log.contains("invalid_document"), "{log}");
    assert!(!log.contains(marker), "document text in the log:\n{log}");
    assert!(!log.contains(key), "a key in the log:\n{log}");
}

#[test]
fn sigterm_finishes_in_flight_requests_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let s = Server::start(&db, &["--batch-size", "64"]);
    let v = vocab();
    let n = 400;
    let mut nd = String::new();
    for i in 0..n {
        nd.push_str(&json!({"key": format!("d{i}"), "text": text(&passage(&v, 80, 1000 + i))}).to_string());
        nd.push('\n');
    }
    let mut c = Conn::connect(s.addr).unwrap();
    c.send("POST", "/v1/documents", &[], nd.as_bytes()).unwrap();
    let (status, _) = c.read_head().unwrap();
    assert_eq!(status, 200);
    // The request is in flight: stop the server now; it must finish streaming every result.
    let pid = s.child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let mut body = Vec::new();
    while let Some(chunk) = c.read_chunk().unwrap() {
        body.extend(chunk);
    }
    let lines: Vec<Value> = String::from_utf8(body)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), n as usize);
    assert!(lines.iter().all(|l| l["stored"] == true));
    drop(c);
    let (st, log) = s.stop_after_signal();
    assert!(st.success(), "{st:?}\n{log}");
    assert!(log.contains("stopped cleanly"), "{log}");
    // Everything is there after a restart, and check is clean.
    let out = Command::new(fpdb_bin()).args(["--json", "check"]).arg(&db).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let s = Server::start(&db, &[]);
    let v = body_json(&s.req("GET", "/v1/stats", b""));
    assert_eq!(v["docs"], n);
}

impl Server {
    /// Waits for a server already sent SIGTERM.
    fn stop_after_signal(mut self) -> (ExitStatus, String) {
        let status = self.child.wait().unwrap();
        (status, std::fs::read_to_string(&self.stderr).unwrap_or_default())
    }
}

/// The text of `/metrics`.
fn metrics_text(s: &Server) -> String {
    s.req("GET", "/metrics", b"").text()
}

/// The value of a metric line `name` (without labels).
fn metric(m: &str, name: &str) -> f64 {
    m.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in\n{m}"))
}

#[test]
fn invented_methods_and_paths_do_not_grow_the_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&dir.path().join("db"), &[]);
    let mut c = Conn::connect(s.addr).unwrap();
    for i in 0..60 {
        let r = c.request(&format!("M{i}"), "/healthz", &[], b"").unwrap();
        assert_error(&r, 405, "method_not_allowed");
        let r = c.request("GET", &format!("/nope/p{i}"), &[], b"").unwrap();
        assert_error(&r, 404, "not_found");
    }
    let m = metrics_text(&s);
    assert!(
        m.contains(r#"fpdb_http_requests_total{route="/healthz",method="other",status="405"} 60"#),
        "{m}"
    );
    assert!(
        m.contains(r#"fpdb_http_requests_total{route="unmatched",method="GET",status="404"} 60"#),
        "{m}"
    );
    assert!(!m.contains("M7") && !m.contains("/nope"), "{m}");
}

#[test]
fn the_bearer_scheme_is_case_insensitive() {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    let token = "s3cret-token-0123456789abcdef";
    std::fs::write(&token_file, token).unwrap();
    let s = Server::start(&dir.path().join("db"), &["--token-file", &token_file.display().to_string()]);
    let doc = json!({"text": "a document written with a lower-case scheme name"}).to_string();
    for (i, scheme) in ["bearer", "BEARER", "Bearer"].iter().enumerate() {
        let auth = format!("{scheme} {token}");
        let r = request(
            s.addr,
            "PUT",
            &format!("/v1/documents/k{i}"),
            &[("Authorization", &auth)],
            doc.as_bytes(),
        )
        .unwrap();
        assert_eq!(r.status, 200, "{scheme}: {}", r.text());
    }
    let r = request(
        s.addr,
        "PUT",
        "/v1/documents/x",
        &[("Authorization", &format!("Basic {token}"))],
        doc.as_bytes(),
    )
    .unwrap();
    assert_error(&r, 401, "unauthorized");
}

#[test]
fn every_content_encoding_header_counts_and_non_ascii_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&dir.path().join("db"), &[]);
    let q = json!({"text": "some words to check for duplicates"}).to_string();
    // A non-ASCII coding is not identity.
    let r = request(
        s.addr,
        "POST",
        "/v1/duplicates",
        &[("Content-Encoding", "gzip\u{e9}")],
        q.as_bytes(),
    )
    .unwrap();
    assert_error(&r, 415, "unsupported_encoding");
    // Repeated headers are one list: gzip then br is two codings (415), identity then gzip is gzip.
    let gz = gzip(q.as_bytes());
    let r = request(
        s.addr,
        "POST",
        "/v1/duplicates",
        &[("Content-Encoding", "gzip"), ("Content-Encoding", "br")],
        &gz,
    )
    .unwrap();
    assert_error(&r, 415, "unsupported_encoding");
    let r = request(
        s.addr,
        "POST",
        "/v1/duplicates",
        &[("Content-Encoding", "identity"), ("Content-Encoding", "gzip")],
        &gz,
    )
    .unwrap();
    assert_eq!(r.status, 200, "{}", r.text());
}

#[test]
fn keys_too_long_for_a_url_are_addressed_in_the_body() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&dir.path().join("db"), &[]);
    // 60,000 bytes of key: storable (at most 65,536), but 180,000 bytes percent-encoded.
    let key = "é".repeat(30_000);
    let line = format!(
        "{}\n",
        json!({"key": key, "text": "a document whose key is far too long for any URL"})
    );
    let r = s.req("POST", "/v1/documents", line.as_bytes());
    assert_eq!(r.status, 200);
    assert!(r.text().contains("\"stored\":true"), "{}", &r.text()[..200.min(r.text().len())]);
    // The URL form is refused, as JSON like every error.
    let r = s.req("GET", &format!("/v1/documents/{}", encode_segment(&key)), b"");
    assert_error(&r, 414, "uri_too_long");
    // The body-addressed forms reach it.
    let body = json!({"key": key}).to_string();
    let r = s.req("POST", "/v1/documents:get", body.as_bytes());
    assert_eq!(r.status, 200);
    assert_eq!(body_json(&r)["key"], key.as_str());
    let r = s.req("POST", "/v1/documents:delete", body.as_bytes());
    assert_eq!(r.status, 200);
    assert_eq!(body_json(&r)["deleted"], true);
    assert_error(&s.req("POST", "/v1/documents:get", body.as_bytes()), 404, "document_not_found");
    assert_error(&s.req("POST", "/v1/documents:delete", body.as_bytes()), 404, "document_not_found");
    assert_error(&s.req("POST", "/v1/documents:get", b"{\"id\": 1}"), 400, "invalid_json");
}

#[test]
fn slow_clients_time_out_and_load_past_the_bounds_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(
        &dir.path().join("db"),
        &[
            "--max-inflight",
            "3",
            "--max-connections",
            "12",
            "--body-timeout-s",
            "4",
            "--header-timeout-s",
            "2",
        ],
    );
    let doc = json!({"text": "a document sent very slowly by a client"}).to_string();
    let head = format!(
        "PUT /v1/documents/slow HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n",
        doc.len()
    );
    // Three requests whose bodies never finish hold every slot...
    let mut slow: Vec<Conn> = (0..3)
        .map(|_| {
            let mut c = Conn::connect(s.addr).unwrap();
            c.write_raw(head.as_bytes()).unwrap();
            c.write_raw(&doc.as_bytes()[..5]).unwrap();
            c
        })
        .collect();
    // Wait until the server works on all three (/metrics is not counted).
    let t = std::time::Instant::now();
    while metric(&metrics_text(&s), "fpdb_http_inflight") < 3.0 {
        assert!(
            t.elapsed() < std::time::Duration::from_secs(3),
            "the slow requests were not admitted"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // ...so the next one is refused at once (503 with Retry-After), while /healthz still answers.
    let mut refused = None;
    while t.elapsed() < std::time::Duration::from_millis(3000) {
        let r = s.req("GET", "/v1/stats", b"");
        if r.status == 503 {
            refused = Some(r);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let r = refused.expect("a request past --max-inflight was not refused");
    assert_error(&r, 503, "overloaded");
    assert_eq!(r.header("retry-after"), Some("1"));
    // Health answers 200 and says the server is saturated (a load balancer's cue to send elsewhere).
    let h = s.req("GET", "/healthz", b"");
    assert_eq!(h.status, 200);
    let v = body_json(&h);
    assert_eq!(v["status"], "degraded", "{v}");
    assert!(v["reason"].as_str().is_some_and(|r| r.contains("--max-inflight")), "{v}");
    // The slow bodies end with 408 after --body-timeout-s.
    for c in &mut slow {
        let r = c.read_response().unwrap();
        assert_error(&r, 408, "body_timeout");
        assert!(t.elapsed() < std::time::Duration::from_secs(12));
    }
    let h = s.req("GET", "/healthz", b"");
    assert_eq!(body_json(&h)["status"], "ok", "the slots are free again");
    assert_eq!(put(&s, "fast", json!({"text": "a quick document"})).status, 200);
    // A client that never finishes its request head is closed after --header-timeout-s.
    let mut idle = Conn::connect(s.addr).unwrap();
    idle.write_raw(b"GET /healthz HTTP/1.1\r\n").unwrap();
    let t = std::time::Instant::now();
    assert!(idle.read_response().is_err(), "a trickled head was answered");
    assert!(t.elapsed() < std::time::Duration::from_secs(8), "{:?}", t.elapsed());
    // Past --max-connections, a new connection is answered 503 at once and closed.
    let held: Vec<Conn> = (0..12).map(|_| Conn::connect(s.addr).unwrap()).collect();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let mut extra = Conn::connect(s.addr).unwrap();
    let r = extra.read_response().unwrap();
    assert_error(&r, 503, "overloaded");
    assert_eq!(r.header("retry-after"), Some("1"));
    drop(held);
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(s.req("GET", "/healthz", b"").status, 200);
}

#[cfg(feature = "failpoints")]
#[test]
fn a_writer_panic_makes_healthz_answer_503_and_writes_refused() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start_env(&dir.path().join("db"), &[], &[("FPDB_FAILPOINTS", "writer.decide.panic=2")]);
    let (base, _, other, third) = docs();
    assert_eq!(put(&s, "a", json!({"text": base})).status, 200);
    let r = put(&s, "b", json!({"text": other}));
    assert_error(&r, 503, "unavailable");
    let v = body_json(&r);
    assert!(!r.text().contains("injected panic"), "a panic text reached the client: {v}");
    let rid = v["error"]["request_id"].as_str().expect("request id").to_string();
    assert_eq!(r.header("x-request-id"), Some(rid.as_str()));
    let h = s.req("GET", "/healthz", b"");
    assert_eq!(h.status, 503, "{}", h.text());
    let hv = body_json(&h);
    assert_eq!(hv["status"], "failed");
    assert!(hv["reason"].as_str().is_some_and(|r| r.contains("restart")), "{hv}");
    // Later writes are refused (the handle is poisoned), reads still work.
    assert_error(&put(&s, "c", json!({"text": third})), 503, "unavailable");
    assert_eq!(s.req("GET", "/v1/documents/a", b"").status, 200);
    let (_, log) = s.stop();
    assert!(log.contains("injected panic"), "{log}");
    assert!(log.contains(&format!("request {rid}: unavailable")), "{log}");
}

#[cfg(feature = "failpoints")]
#[test]
fn error_bodies_carry_a_request_id_and_never_internals() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start_env(&dir.path().join("db"), &[], &[("FPDB_FAILPOINTS", "writer.decide=1")]);
    let (base, ..) = docs();
    let r = put(&s, "a", json!({"text": base}));
    assert_eq!(r.status, 500, "{}", r.text());
    let v = body_json(&r);
    assert_eq!(v["error"]["code"], "internal");
    let rid = v["error"]["request_id"].as_str().expect("request id").to_string();
    assert_eq!(r.header("x-request-id"), Some(rid.as_str()));
    assert!(
        !r.text().contains("failpoint") && !r.text().contains(&*dir.path().to_string_lossy()),
        "{v}"
    );
    // A failed commit poisons the handle: the health check says so.
    assert_eq!(s.req("GET", "/healthz", b"").status, 503);
    // Client errors carry their id too.
    let r = s.req("GET", "/v1/documents/none", b"");
    assert_error(&r, 404, "document_not_found");
    assert!(body_json(&r)["error"]["request_id"].as_str().is_some_and(|id| id != rid));
    let (_, log) = s.stop();
    assert!(
        log.lines().any(|l| l.contains(&rid) && l.contains("failpoint `writer.decide`")),
        "the log lacks the detail under {rid}:\n{log}"
    );
}

#[test]
fn puts_alternating_dedup_modes_share_group_commits() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&dir.path().join("db"), &[]);
    let v = vocab();
    let clients = 48;
    let per = 6;
    std::thread::scope(|sc| {
        for c in 0..clients {
            let (s, v) = (&s, &v);
            sc.spawn(move || {
                let mut conn = Conn::connect(s.addr).unwrap();
                for i in 0..per {
                    let n = c * per + i;
                    // Concurrent requests carry different modes (clients run in step: client c
                    // is at its i-th document while the others are at theirs).
                    let mode = ["link", "off", "skip"][(c + i) % 3];
                    let body = json!({"text": text(&passage(v, 60, 5000 + n as u64))}).to_string();
                    let r = conn
                        .request("PUT", &format!("/v1/documents/d{n}?dedup={mode}"), &[], body.as_bytes())
                        .unwrap();
                    assert_eq!(r.status, 200, "{}", r.text());
                }
            });
        }
    });
    let m = metrics_text(&s);
    let docs = metric(&m, "fpdb_writer_documents_total");
    let batches = metric(&m, "fpdb_writer_batches_total");
    assert_eq!(docs, (clients * per) as f64);
    // One commit per mode per batch: far fewer commits than documents.
    eprintln!("{batches} group commits for {docs} documents");
    assert!(batches <= docs / 2.0, "{batches} group commits for {docs} documents");
}

#[test]
fn a_broad_duplicate_check_is_cut_at_its_bounds_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let voc = vocab();
    let base = passage(&voc, 150, 1);
    let mut nd = String::new();
    for i in 0..12u64 {
        nd.push_str(&json!({"key": format!("c{i}"), "text": text(&edit(&voc, &base, 2, 100 + i))}).to_string());
        nd.push('\n');
    }
    let broad = json!({"text": text(&base), "max_distance": 32, "min_jaccard": 0}).to_string();
    {
        let s = Server::start(&db, &[]);
        assert_eq!(s.req("POST", "/v1/documents?dedup=off", nd.as_bytes()).status, 200);
        let v = body_json(&s.req("POST", "/v1/duplicates", broad.as_bytes()));
        assert_eq!((v["truncated"].as_bool(), v["candidates"].as_u64()), (Some(false), Some(12)), "{v}");
        assert_eq!(v["hits"].as_array().unwrap().len(), 12);
        assert_eq!(body_json(&s.req("GET", "/v1/stats", b""))["max_query_distance"], 32);
    }
    // At most 3 candidates verified: 3 hits at most, and the answer says it is incomplete. The
    // accepted max_distance shrinks with the cap (12 documents · P(distance ≤ k) ≤ 3): k = 32 is
    // refused, the bound is taken.
    let s = Server::start(&db, &["--max-candidates", "3"]);
    let r = s.req("POST", "/v1/duplicates", broad.as_bytes());
    assert_error(&r, 422, "max_distance_too_expensive");
    let bound = body_json(&s.req("GET", "/v1/stats", b""))["max_query_distance"].as_u64().unwrap();
    assert!((12..32).contains(&bound), "{bound}");
    let broad = json!({"text": text(&base), "max_distance": bound, "min_jaccard": 0}).to_string();
    let v = body_json(&s.req("POST", "/v1/duplicates", broad.as_bytes()));
    assert_eq!((v["truncated"].as_bool(), v["candidates"].as_u64()), (Some(true), Some(3)), "{v}");
    assert!(v["hits"].as_array().unwrap().len() <= 3, "{v}");
    // A narrow check under the same cap is complete.
    let narrow = json!({"text": text(&edit(&voc, &base, 2, 100)), "max_distance": 0, "min_jaccard": 1.0}).to_string();
    let n = body_json(&s.req("POST", "/v1/duplicates", narrow.as_bytes()));
    assert_eq!(n["truncated"], false, "{n}");
    drop(s);
    // A deadline already past when verification starts: nothing verified, truncated.
    let s = Server::start(&db, &["--query-deadline-ms", "0"]);
    let v = body_json(&s.req("POST", "/v1/duplicates", broad.as_bytes()));
    assert_eq!((v["truncated"].as_bool(), v["candidates"].as_u64()), (Some(true), Some(0)), "{v}");
    assert_eq!(v["hits"], json!([]));
}

/// `POST /v1/duplicates:batch`: one NDJSON answer line per input line, in input order,
/// each what `POST /v1/duplicates` answers for that line's body; a bad line answers an error with
/// its line number and the others go on; the body is bounded by `--max-bulk-bytes`.
#[test]
fn a_batch_duplicate_check_answers_each_line_as_the_single_form() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&dir.path().join("db"), &["--max-bulk-bytes", "200000"]);
    let (base, near, other, third) = docs();
    assert_eq!(put(&s, "paper/1", json!({"text": base, "doi": "10.1/a"})).status, 200);
    assert_eq!(put(&s, "paper/2", json!({"text": other})).status, 200);
    let checks = [
        json!({"text": near}),
        json!({"text": third}),
        json!({"text": other, "limit": 1}),
        json!({"text": "", "doi": "10.1/a"}),
    ];
    let nd = format!(
        "{}\n\n{}\n{{not json\n{}\r\n{}\n{}\n",
        checks[0],
        checks[1],
        checks[2],
        json!({"text": near, "limit": 10_000_000}),
        checks[3]
    );
    let r = s.req("POST", "/v1/duplicates:batch", nd.as_bytes());
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("application/x-ndjson"));
    let lines: Vec<Value> = r.text().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(
        lines.iter().map(|l| l["line"].as_u64().unwrap()).collect::<Vec<_>>(),
        vec![1, 3, 4, 5, 6, 7],
        "{}",
        r.text()
    );
    assert_eq!(lines[2]["error"]["code"], "invalid_json", "{}", lines[2]);
    assert_eq!(lines[4]["error"]["code"], "invalid_parameter", "{}", lines[4]);
    // Each checked line answers what the single form answers (timings aside).
    for (l, c) in [(0, 0), (1, 1), (3, 2), (5, 3)] {
        let single = body_json(&s.req("POST", "/v1/duplicates", checks[c].to_string().as_bytes()));
        assert!(lines[l]["error"].is_null(), "{}", lines[l]);
        assert_eq!(lines[l]["hits"], single["hits"], "line {}", lines[l]["line"]);
        assert_eq!(lines[l]["truncated"], single["truncated"]);
        assert_eq!(lines[l]["candidates"], single["candidates"]);
    }
    assert_eq!(lines[0]["hits"][0]["key"], "paper/1", "{}", lines[0]);
    assert_eq!(lines[1]["hits"], json!([]));
    assert_eq!(lines[3]["hits"].as_array().unwrap().len(), 1);
    assert_eq!(lines[5]["hits"][0]["key"], "paper/1");
    // No line, no answer; a body past --max-bulk-bytes (the bulk ingest's bound) is 413.
    let r = s.req("POST", "/v1/duplicates:batch", b"\n \n");
    assert_eq!((r.status, r.text()), (200, String::new()));
    assert_error(&s.req("POST", "/v1/duplicates:batch", b""), 400, "invalid_json");
    let big = format!("{}\n", json!({"text": "word ".repeat(50_000)}));
    assert_error(&s.req("POST", "/v1/duplicates:batch", big.as_bytes()), 413, "body_too_large");
    // In the OpenAPI.
    let v = body_json(&s.req("GET", "/openapi.json", b""));
    assert!(v["paths"]["/v1/duplicates:batch"]["post"].is_object());
    assert!(v["components"]["schemas"]["BatchLineOut"].is_object());
}

/// The batch form holds its duplicate-check permit (`--max-queries`) until its last line is
/// answered: while a client reads a long answer slowly, a single check is refused (503
/// `overloaded`), and once the answer is read, it is served again.
#[test]
fn a_streaming_batch_holds_its_duplicate_check_permit() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&dir.path().join("db"), &["--max-queries", "1"]);
    let (base, ..) = docs();
    assert_eq!(put(&s, "paper/1", json!({"text": base})).status, 200);
    // Far more answer bytes (about 14 MB) than the socket buffers and the server's channel hold.
    let line = format!("{}\n", json!({"text": "a few words of no stored document"}));
    let n = 200_000;
    let mut c = Conn::connect(s.addr).unwrap();
    c.send("POST", "/v1/duplicates:batch", &[], line.repeat(n).as_bytes()).unwrap();
    // The answer has begun (its head is in) and is not read further: the checks wait on the client.
    assert_eq!(c.read_head().unwrap().0, 200);
    let single = json!({"text": base}).to_string();
    let mut refused = false;
    for _ in 0..100 {
        let r = s.req("POST", "/v1/duplicates", single.as_bytes());
        if r.status == 503 {
            assert_error(&r, 503, "overloaded");
            refused = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(refused, "a single check was never refused while the batch streamed");
    let mut body = Vec::new();
    while let Some(chunk) = c.read_chunk().unwrap() {
        body.extend(chunk);
    }
    assert_eq!(body.iter().filter(|&&b| b == b'\n').count(), n);
    // The answer is read: the permit is back (bounded wait for the task to end).
    let mut served = false;
    for _ in 0..200 {
        if s.req("POST", "/v1/duplicates", single.as_bytes()).status == 200 {
            served = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(served, "the permit was not given back");
}

/// A database at `dir/db` with the semantic channel on the tiny model (written to `dir/tiny`),
/// 32 tokens a text, and `edit`'s changes to the channel's settings.
#[cfg(feature = "semantic")]
fn tiny_semantic_db(dir: &Path, edit: impl FnOnce(&mut fpdb::semantic::SemanticConfig)) -> PathBuf {
    let model = fpdb::semantic::testkit::write_tiny_model(&dir.join("tiny"), 1).unwrap();
    let db = dir.join("db");
    let mut cfg = fpdb::semantic::SemanticConfig::new(&model);
    cfg.max_tokens = 32;
    edit(&mut cfg);
    fpdb::Db::create(&db, &fpdb::CreateOptions::default().with_semantic(Some(cfg))).unwrap();
    db
}

/// The semantic channel over HTTP (the CORE paper's hybrid): a database made with the tiny model; every
/// hit says which channels matched it and its cosine, and the answer how much is not embedded.
#[cfg(feature = "semantic")]
#[test]
fn duplicates_carry_the_semantic_channels() {
    let t = tempfile::tempdir().unwrap();
    let db = tiny_semantic_db(t.path(), |_| {});
    let s = Server::start(&db, &[]);
    let words = fpdb::semantic::testkit::TINY_WORDS;
    let text = |i: usize| (0..12).map(|j| words[(i * 7 + j * 3) % words.len()]).collect::<Vec<_>>().join(" ");
    for i in 0..4 {
        assert_eq!(put(&s, &format!("d{i}"), json!({"text": text(i)})).status, 200);
    }
    let check = |body: Value| {
        let r = s.req("POST", "/v1/duplicates", body.to_string().as_bytes());
        assert_eq!(r.status, 200, "{}", r.text());
        body_json(&r)
    };
    let v = check(json!({"text": text(2), "min_cosine": -1.0, "wait_semantic_ms": 60000}));
    assert_eq!(v["semantic_pending"], 0);
    let hits = v["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 4, "{v}");
    assert_eq!(
        (hits[0]["key"].clone(), hits[0]["channels"].clone()),
        (json!("d2"), json!(["text", "semantic"]))
    );
    assert!(hits[0]["cosine"].as_f64().unwrap() > 0.999);
    for h in &hits[1..] {
        assert_eq!(
            (h["channels"].clone(), h["match"].clone()),
            (json!(["semantic"]), json!("semantic")),
            "{h}"
        );
        assert!(h["cosine"].is_number());
    }
    let r = s.req(
        "POST",
        "/v1/duplicates",
        json!({"text": text(1), "min_cosine": 3.0}).to_string().as_bytes(),
    );
    assert_eq!(r.status, 400, "{}", r.text());
}

/// Six versions of one text (each a near-duplicate of the others) and an unrelated one, stored
/// with a metadata field `repo` that alternates.
fn versions(s: &Server) -> Vec<String> {
    let v = vocab();
    let base = passage(&v, 150, 21);
    // Version i changes one word, at a place of its own: any two differ in at most two words.
    let mut texts: Vec<String> = (0..6usize)
        .map(|i| {
            let mut w = base.clone();
            if i > 0 {
                w[20 * i] = "changed".into();
            }
            text(&w)
        })
        .collect();
    texts.push(text(&passage(&v, 150, 22)));
    for (i, t) in texts.iter().enumerate() {
        let repo = if i % 2 == 0 { "arxiv" } else { "core" };
        let r = s.req(
            "PUT",
            &format!("/v1/documents/v{i}?dedup=off"),
            json!({"text": t, "meta": {"repo": repo, "n": i}}).to_string().as_bytes(),
        );
        assert_eq!(r.status, 200, "{}", r.text());
    }
    texts
}

fn hit_keys(v: &Value) -> Vec<String> {
    v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["key"].as_str().unwrap().to_string())
        .collect()
}

/// The hits without what differs between two answers to one question (the time taken).
fn hits_of(v: &Value) -> Value {
    v["hits"].clone()
}

#[test]
fn the_duplicates_of_a_stored_key_equal_a_check_with_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&dir.path().join("db"), &[]);
    let texts = versions(&s);
    for (i, t) in texts.iter().enumerate() {
        let by_key = s.req("GET", &format!("/v1/documents/v{i}/duplicates"), b"");
        assert_eq!(by_key.status, 200, "{}", by_key.text());
        let by_key = body_json(&by_key);
        let by_text = body_json(&s.req("POST", "/v1/duplicates", json!({"text": t}).to_string().as_bytes()));
        let mut want = hits_of(&by_text);
        want.as_array_mut().unwrap().retain(|h| h["key"] != format!("v{i}"));
        assert_eq!(hits_of(&by_key), want, "v{i}");
        assert_eq!(by_key["truncated"], false);
        assert_eq!(hit_keys(&by_key).len(), if i < 6 { 5 } else { 0 }, "v{i}: {by_key}");
    }
    // The limit counts the others; a filter on a metadata field; a missing key; a bad filter.
    let two = body_json(&s.req("GET", "/v1/documents/v0/duplicates?limit=2", b""));
    assert_eq!(hit_keys(&two).len(), 2);
    let core = body_json(&s.req("GET", "/v1/documents/v0/duplicates?where=repo:core", b""));
    let mut keys = hit_keys(&core);
    keys.sort();
    assert_eq!(keys, ["v1", "v3", "v5"]);
    let one = body_json(&s.req("GET", "/v1/documents/v0/duplicates?where=n:4", b""));
    assert_eq!(hit_keys(&one), ["v4"]);
    assert_error(&s.req("GET", "/v1/documents/absent/duplicates", b""), 404, "document_not_found");
    assert_error(
        &s.req("GET", "/v1/documents/v0/duplicates?where=repo", b""),
        400,
        "invalid_parameter",
    );
    // The same filter on POST /v1/duplicates, and min_containment there.
    let body = json!({"text": texts[0], "where": {"repo": "arxiv"}}).to_string();
    let mut keys = hit_keys(&body_json(&s.req("POST", "/v1/duplicates", body.as_bytes())));
    keys.sort();
    assert_eq!(keys, ["v0", "v2", "v4"]);
    let half: String = texts[6].split(' ').take(75).collect::<Vec<_>>().join(" ");
    let contained = body_json(&s.req(
        "POST",
        "/v1/duplicates",
        json!({"text": half, "min_containment": 0.8}).to_string().as_bytes(),
    ));
    assert_eq!(hit_keys(&contained), ["v6"], "{contained}");
    let plain = body_json(&s.req("POST", "/v1/duplicates", json!({"text": half}).to_string().as_bytes()));
    assert!(hit_keys(&plain).is_empty(), "half a text is no near-duplicate: {plain}");
    // The duplicate-check counter and the duplicate documents' gauge.
    let m = metrics_text(&s);
    assert!(metric(&m, "fpdb_duplicate_checks_with_hits_total") >= 8.0, "{m}");
}

#[test]
fn documents_and_groups_are_listed_a_page_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&dir.path().join("db"), &[]);
    let v = vocab();
    // 11 documents: d0..d9 and a copy of d3 (one group of two).
    for i in 0..10u64 {
        assert_eq!(
            put(&s, &format!("d{i}"), json!({"text": text(&passage(&v, 80, 300 + i))})).status,
            200
        );
    }
    assert_eq!(put(&s, "copy-of-d3", json!({"text": text(&passage(&v, 80, 303))})).status, 200);
    let mut keys = Vec::new();
    let mut after: Option<String> = None;
    let mut pages = 0;
    loop {
        let path = match &after {
            None => "/v1/documents?limit=4".to_string(),
            Some(a) => format!("/v1/documents?limit=4&after={a}"),
        };
        let page = body_json(&s.req("GET", &path, b""));
        pages += 1;
        for d in page["documents"].as_array().unwrap() {
            keys.push(d["key"].as_str().unwrap().to_string());
            assert!(d["group"]["id"].is_u64() && d["simhash"].is_string(), "{d}");
        }
        match page["next"].as_str() {
            Some(n) => after = Some(n.to_string()),
            None => break,
        }
    }
    let mut want: Vec<String> = (0..10).map(|i| format!("d{i}")).collect();
    want.push("copy-of-d3".into());
    assert_eq!(keys, want);
    assert_eq!(pages, 3);
    // One listed document is what GET returns.
    let first = body_json(&s.req("GET", "/v1/documents?limit=1", b""));
    assert_eq!(first["documents"][0], body_json(&s.req("GET", "/v1/documents/d0", b"")));
    let groups = body_json(&s.req("GET", "/v1/groups", b""));
    assert_eq!(groups["groups"].as_array().unwrap().len(), 1, "{groups}");
    assert_eq!(groups["groups"][0]["canonical"], "d3");
    assert_eq!(groups["groups"][0]["size"], 2);
    assert!(groups.get("next").is_none());
    assert_error(&s.req("GET", "/v1/documents?after=x", b""), 400, "invalid_parameter");
    assert_error(&s.req("GET", "/v1/groups?limit=0", b""), 400, "invalid_parameter");
}

#[test]
fn an_incoming_request_id_is_kept_and_the_log_can_be_json() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&dir.path().join("db"), &["--log-requests", "--log-format", "json"]);
    let r = request(s.addr, "GET", "/v1/documents/none", &[("X-Request-Id", "trace-abc-123")], b"").unwrap();
    assert_eq!(r.header("x-request-id"), Some("trace-abc-123"));
    assert_eq!(body_json(&r)["error"]["request_id"], "trace-abc-123");
    // One that is not a plain token is replaced.
    let r = request(s.addr, "GET", "/healthz", &[("X-Request-Id", "has space")], b"").unwrap();
    assert!(r.header("x-request-id").is_some_and(|id| id.starts_with("r-")), "{:?}", r.headers);
    let m = metrics_text(&s);
    for name in [
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "process_open_fds",
        "fpdb_semantic_pending",
        "fpdb_duplicate_documents",
    ] {
        assert!(metric(&m, name) >= 0.0, "{name}");
    }
    assert!(
        metric(&m, "process_resident_memory_bytes") > 1e6 && metric(&m, "process_open_fds") >= 3.0,
        "{m}"
    );
    assert!(
        m.contains(&format!("fpdb_build_info{{version=\"{}\"", env!("CARGO_PKG_VERSION"))),
        "{m}"
    );
    let (st, log) = s.stop();
    assert!(st.success());
    let lines: Vec<Value> = log
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let req = lines
        .iter()
        .find(|l| l["request_id"] == "trace-abc-123" && l["route"] == "/v1/documents/{key}")
        .unwrap_or_else(|| panic!("no request event in\n{log}"));
    assert_eq!((req["method"].as_str(), req["status"].as_u64()), (Some("GET"), Some(404)), "{req}");
    assert!(
        req["ms"].is_f64() && req["timestamp"].is_string() && req["level"] == "INFO",
        "{req}"
    );
}

/// Words of a shell command line: spaces split, single quotes keep what they hold.
fn shell_words(cmd: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let (mut quoted, mut any) = (false, false);
    for c in cmd.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    words.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(cur);
    }
    words
}

#[test]
fn the_readme_http_example_answers_what_the_readme_says() {
    let md = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap();
    let blocks: Vec<_> = readme_md::console_blocks(&md)
        .into_iter()
        .filter(|b| b.first().is_some_and(|(c, _)| c.starts_with("curl ")))
        .collect();
    assert_eq!(blocks.len(), 1, "one HTTP example in README.md");
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&dir.path().join("db"), &[]);
    for (cmd, want) in &blocks[0] {
        let words = shell_words(cmd);
        assert_eq!(words[..2], ["curl", "-s"], "{cmd}");
        let (mut method, mut body, mut path, mut headers) = ("GET".to_string(), String::new(), None, Vec::new());
        let mut it = words[2..].iter();
        while let Some(w) = it.next() {
            match w.as_str() {
                "-X" => method = it.next().unwrap().clone(),
                "-d" => {
                    body = it.next().unwrap().clone();
                    if method == "GET" {
                        method = "POST".into();
                    }
                }
                "-H" => headers.push(it.next().unwrap().clone()),
                url => path = Some(url.strip_prefix("localhost:7878").unwrap_or_else(|| panic!("{cmd}")).to_string()),
            }
        }
        let headers: Vec<(&str, &str)> = headers.iter().filter_map(|h| h.split_once(": ")).collect();
        let r = request(s.addr, &method, &path.unwrap(), &headers, body.as_bytes()).unwrap();
        let text = r.text();
        let got: Vec<&str> = text.lines().collect();
        assert_eq!(
            got.len(),
            want.len(),
            "$ {cmd}\nREADME says:\n{}\nit answers:\n{text}",
            want.join("\n")
        );
        for (w, g) in want.iter().zip(&got) {
            assert!(readme_md::line_matches(w, g), "$ {cmd}\nREADME says: {w}\nit answers:  {g}");
        }
    }
}

#[test]
fn stored_texts_are_served_and_a_backup_is_made_behind_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let token_file = dir.path().join("token");
    let token = "backup-token-0123456789abcdef";
    std::fs::write(&token_file, token).unwrap();
    let s = Server::start(&db, &["--store-text", "--token-file", &token_file.display().to_string()]);
    let (a, b, _, _) = docs();
    let odd = format!("  {a}\n\ttrailing spaces and é  \n");
    let put_auth = |key: &str, text: &str| {
        let body = json!({"text": text}).to_string();
        s.req_auth("PUT", &format!("/v1/documents/{key}"), token, body.as_bytes())
    };
    assert_eq!(put_auth("a", &odd).status, 200);
    assert_eq!(put_auth("b", &b).status, 200);
    let r = body_json(&s.req("GET", "/v1/documents/a?text=true", b""));
    assert_eq!(r["text"], odd.as_str(), "{r}");
    let r = body_json(&s.req("GET", "/v1/documents/a", b""));
    assert!(r.get("text").is_none(), "the text only when asked: {r}");
    assert_error(&s.req("GET", "/v1/documents/zz?text=true", b""), 404, "document_not_found");
    assert_error(&s.req("GET", "/v1/documents/a?text=maybe", b""), 400, "invalid_parameter");
    // the backup: behind the token, then a copy that opens with the texts
    let copy = dir.path().join("copy");
    let body = json!({"dir": copy.display().to_string()}).to_string();
    assert_error(&s.req("POST", "/v1/admin/backup", body.as_bytes()), 401, "unauthorized");
    let r = s.req_auth("POST", "/v1/admin/backup", token, body.as_bytes());
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(body_json(&r)["segments"].as_u64().unwrap() >= 1);
    assert_error(
        &s.req_auth("POST", "/v1/admin/backup", token, body.as_bytes()),
        409,
        "already_exists",
    );
    // an empty directory name is the request's fault, not the server's; so is an unknown query
    // parameter and a wait past its documented maximum
    assert_error(
        &s.req_auth("POST", "/v1/admin/backup", token, br#"{"dir": ""}"#),
        400,
        "invalid_parameter",
    );
    assert_error(
        &s.req_auth("POST", "/v1/admin/backup", token, br#"{"dir": "a\u0000b"}"#),
        400,
        "invalid_parameter",
    );
    assert_error(
        &s.req("POST", "/v1/duplicates", br#"{"text": "", "doi": "10.0/0", "max_distance": 33}"#),
        400,
        "invalid_parameter",
    );
    assert_error(&s.req("GET", "/v1/documents/a?text=true&colour=red", b""), 400, "invalid_parameter");
    assert_error(
        &s.req(
            "POST",
            "/v1/duplicates",
            br#"{"text": "x", "wait_semantic_ms": 9223372036854775808}"#,
        ),
        400,
        "invalid_parameter",
    );
    let (st, _) = s.stop();
    assert!(st.success());
    let c = fpdb::Db::open(&copy).unwrap();
    assert!(c.check().unwrap().faults.is_empty());
    assert_eq!(c.texts().get("a").unwrap().as_deref(), Some(odd.as_str()));
    assert_eq!(c.stats().docs, 2);
    // a database that keeps no texts answers 400 to ?text=true
    let plain = dir.path().join("plain");
    let s = Server::start(&plain, &[]);
    assert_eq!(put(&s, "a", json!({"text": a})).status, 200);
    assert_error(&s.req("GET", "/v1/documents/a?text=true", b""), 400, "invalid_parameter");
}

/// A 503 `overloaded` on a kept-alive connection (past `--max-queries`): the server either keeps
/// the connection usable or says `Connection: close`; a client that reuses it never meets a
/// closed socket it was not told about.
#[test]
fn an_overloaded_answer_says_whether_the_connection_stays() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&dir.path().join("db"), &["--max-queries", "1"]);
    let (base, ..) = docs();
    assert_eq!(put(&s, "paper/1", json!({"text": base})).status, 200);
    // The one duplicate-check permit held by a batch whose long answer is not read.
    let line = format!("{}\n", json!({"text": "a few words of no stored document"}));
    let mut batch = Conn::connect(s.addr).unwrap();
    batch
        .send("POST", "/v1/duplicates:batch", &[], line.repeat(200_000).as_bytes())
        .unwrap();
    assert_eq!(batch.read_head().unwrap().0, 200);
    // A body larger than the server's first read (~130 KB; small enough for the socket buffers,
    // so that the client's write completes): refused before it is read, the connection cannot
    // carry another request, and the answer must say so.
    let single = json!({ "text": format!("{base} {}", "filler words ".repeat(10_000)) }).to_string();
    let mut c = Conn::connect(s.addr).unwrap();
    let mut refused = 0;
    for _ in 0..20 {
        let r = c.request("POST", "/v1/duplicates", &[], single.as_bytes()).unwrap();
        if r.status != 503 {
            std::thread::sleep(std::time::Duration::from_millis(20));
            continue;
        }
        assert_error(&r, 503, "overloaded");
        refused += 1;
        // The server's choice (docs/serve.md): every refusal closes the connection, and says so.
        assert_eq!(r.header("connection").map(str::to_ascii_lowercase).as_deref(), Some("close"));
        if r.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close")) {
            c = Conn::connect(s.addr).unwrap();
            continue;
        }
        // not told to close: the same connection answers the next request
        let next = c.request("GET", "/v1/stats", &[], b"");
        assert!(next.is_ok(), "the connection was closed without `Connection: close`: {next:?}");
    }
    assert!(refused > 0, "no check was refused");
}

/// A client that posts a long batch of checks and reads nothing past the answer's head is cut off
/// after --request-timeout-s (its duplicate-check permit comes back), and SIGTERM ends the server
/// within --shutdown-timeout-s, not when the stalled client's request would time out.
#[test]
fn a_stalled_reader_is_cut_off_and_shutdown_keeps_its_timeout() {
    let line = format!("{}\n", json!({"text": "a few words of no stored document"}));
    let stall = |s: &Server| {
        let mut c = Conn::connect(s.addr).unwrap();
        c.send("POST", "/v1/duplicates:batch", &[], line.repeat(200_000).as_bytes())
            .unwrap();
        assert_eq!(c.read_head().unwrap().0, 200);
        c
    };
    let dir = tempfile::tempdir().unwrap();
    let (base, ..) = docs();
    {
        let s = Server::start(&dir.path().join("db"), &["--max-queries", "1", "--request-timeout-s", "2"]);
        assert_eq!(put(&s, "paper/1", json!({"text": base})).status, 200);
        let _stalled = stall(&s);
        let single = json!({"text": base}).to_string();
        let start = std::time::Instant::now();
        let mut served = false;
        while start.elapsed() < std::time::Duration::from_secs(60) {
            if s.req("POST", "/v1/duplicates", single.as_bytes()).status == 200 {
                served = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        assert!(served, "the stalled batch kept its duplicate-check permit");
    }
    let mut s = Server::start(&dir.path().join("db"), &["--shutdown-timeout-s", "2", "--request-timeout-s", "600"]);
    let _stalled = stall(&s);
    let st = Command::new("kill").args(["-TERM", &s.child.id().to_string()]).status().unwrap();
    assert!(st.success());
    let start = std::time::Instant::now();
    let mut exited = None;
    while start.elapsed() < std::time::Duration::from_secs(30) {
        if let Some(status) = s.child.try_wait().unwrap() {
            exited = Some(status);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        exited.is_some(),
        "still running 30 s after SIGTERM with --shutdown-timeout-s 2: {}",
        std::fs::read_to_string(&s.stderr).unwrap_or_default()
    );
}

/// One document the semantic indexer cannot embed (its queued text does not decode): it is set
/// aside, every check is answered (200, its text hit included), and `/healthz` says `degraded`
/// with the reason (still 200), `/v1/stats` and `/metrics` count it.
#[cfg(feature = "semantic")]
#[test]
fn a_document_set_aside_degrades_health_and_is_counted() {
    use fpdb::semantic::SemanticOptions;
    let t = tempfile::tempdir().unwrap();
    let db = tiny_semantic_db(t.path(), |_| {});
    let words = fpdb::semantic::testkit::TINY_WORDS;
    let text = |i: usize| (0..12).map(|j| words[(i * 7 + j * 3) % words.len()]).collect::<Vec<_>>().join(" ");
    {
        let opts = fpdb::Options {
            semantic: SemanticOptions {
                indexer: false,
                ..SemanticOptions::default()
            },
            ..fpdb::Options::default()
        };
        let d = fpdb::Db::open_with(&db, opts).unwrap();
        for i in 0..5 {
            d.insert(&format!("d{i}"), &text(i)).unwrap();
        }
    }
    {
        let rp = db.join("rocksdb");
        let names = rocksdb::DB::list_cf(&rocksdb::Options::default(), &rp).unwrap();
        let raw = rocksdb::DB::open_cf(&rocksdb::Options::default(), &rp, &names).unwrap();
        raw.put_cf(raw.cf_handle("semantic_queue").unwrap(), 3u64.to_be_bytes(), [0xF5, 9, 0, 0, 0, 1])
            .unwrap();
    }
    let s = Server::start(&db, &[]);
    for i in 0..5 {
        let body = json!({"text": text(i), "wait_semantic_ms": 30000}).to_string();
        let r = s.req("POST", "/v1/duplicates", body.as_bytes());
        assert_eq!(r.status, 200, "{}", r.text());
        let v = body_json(&r);
        assert_eq!(
            (v["semantic_pending"].clone(), v["hits"][0]["key"].clone()),
            (json!(0), json!(format!("d{i}")))
        );
    }
    let r = s.req("GET", "/healthz", b"");
    assert_eq!(r.status, 200);
    let h = body_json(&r);
    assert_eq!(h["status"], "degraded", "{h}");
    assert!(h["reason"].as_str().unwrap().contains("set aside"), "{h}");
    let st = body_json(&s.req("GET", "/v1/stats", b""));
    assert_eq!(
        (st["semantic_set_aside"].clone(), st["semantic_indexer"].clone()),
        (json!(1), json!("degraded")),
        "{st}"
    );
    let m = metrics_text(&s);
    assert_eq!(metric(&m, "fpdb_semantic_set_aside"), 1.0);
    assert!(m.contains("fpdb_semantic_indexer_state{state=\"degraded\"} 1"), "{m}");
}

#[test]
fn decisions_over_http_and_the_review_page() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let s = Server::start(&db, &[]);
    let (a, b, c, _) = docs();
    for (k, t) in [("a", &a), ("b", &b), ("c", &c)] {
        assert_eq!(put(&s, k, json!({ "text": t })).status, 200);
    }
    let view = |k: &str| body_json(&s.req("GET", &format!("/v1/groups/by-key/{k}"), b""));
    let v = view("a");
    assert_eq!(v["group"]["size"], 2, "{v}");
    assert_eq!(v["edges"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["edges"][0]["channel"], "text");
    assert!(v["edges"][0]["jaccard"].as_f64().unwrap() > 0.9);
    assert_error(&s.req("GET", "/v1/groups/by-key/nope", b""), 404, "document_not_found");

    let post = |body: Value| s.req("POST", "/v1/decisions", body.to_string().as_bytes());
    let r = post(json!({"a": "b", "b": "a", "decision": "distinct", "reason": "two editions", "author": "ann"}));
    assert_eq!(r.status, 200, "{}", r.text());
    let d = body_json(&r);
    assert_eq!(
        (&d["a"], &d["b"], &d["decision"], &d["author"]),
        (&json!("a"), &json!("b"), &json!("distinct"), &json!("ann"))
    );
    let v = view("a");
    assert_eq!(v["group"]["size"], 1, "distinct splits at once: {v}");
    assert_eq!(v["edges"][0]["channel"], "held", "{v}");
    assert_eq!(v["edges"][0]["blocked_by"], json!(["a", "b"]));
    assert_eq!(v["decisions"][0]["reason"], "two editions");

    // One document named twice is 409 `same_document` (a key with no document, 404: below).
    assert_error(&post(json!({"a": "a", "b": "a", "decision": "same"})), 409, "same_document");

    // A contradiction: 409 with the evidence, nothing changed.
    assert_eq!(post(json!({"a": "a", "b": "c", "decision": "same"})).status, 200);
    let r = post(json!({"a": "c", "b": "b", "decision": "same"}));
    assert_eq!(r.status, 409, "{}", r.text());
    let e = body_json(&r);
    assert_eq!(e["error"]["code"], "contradiction");
    let ev: Vec<(String, String, String)> = e["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["decision"].as_str().unwrap().into(),
                d["a"].as_str().unwrap().into(),
                d["b"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(ev.contains(&("distinct".into(), "a".into(), "b".into())), "{e}");
    assert!(ev.contains(&("same".into(), "a".into(), "c".into())), "{e}");
    assert_eq!(
        body_json(&s.req("GET", "/v1/decisions", b""))["decisions"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_error(&post(json!({"a": "a", "b": "zz", "decision": "same"})), 404, "document_not_found");
    assert_error(&post(json!({"a": "a", "b": "c", "decision": "maybe"})), 400, "invalid_json");

    let rv = body_json(&s.req("GET", "/v1/review?order=weakest&min_jaccard=0&max_jaccard=1&decided=true", b""));
    assert!(rv["pairs"].as_array().unwrap().iter().any(|p| p["channel"] == "held"), "{rv}");
    assert_error(&s.req("GET", "/v1/review?min_jaccard=2", b""), 400, "invalid_parameter");

    let r = s.req("DELETE", "/v1/decisions/b/a", b"");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(body_json(&r)["undone"]["decision"], "distinct");
    assert_eq!(view("b")["group"]["size"], 3, "undo joins them again");
    assert_error(&s.req("DELETE", "/v1/decisions/b/a", b""), 404, "decision_not_found");

    // The page and its files, compiled in; the contract lists the endpoints.
    let r = s.req("GET", "/review", b"");
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").unwrap().starts_with("text/html"));
    assert!(r.text().contains("/review/review.js"));
    assert!(s.req("GET", "/review/review.js", b"").text().contains("/v1/decisions"));
    assert_eq!(s.req("GET", "/review/review.css", b"").status, 200);
    assert_error(&s.req("GET", "/review/secret.txt", b""), 404, "not_found");
    let api = s.req("GET", "/openapi.json", b"").text();
    for p in ["/v1/decisions", "/v1/decisions/{a}/{b}", "/v1/groups/by-key/{key}", "/v1/review"] {
        assert!(api.contains(&format!("\"{p}\"")), "{p} not in the contract");
    }
    let (st, _) = s.stop();
    assert!(st.success());

    // With a token: decisions are writes; the page's files hold no data and load without it.
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "t0ken-0123456789abcdef\n").unwrap();
    let s = Server::start(&db, &["--token-file", &token_file.display().to_string(), "--token-for-reads"]);
    assert_error(
        &s.req(
            "POST",
            "/v1/decisions",
            json!({"a": "a", "b": "b", "decision": "distinct"}).to_string().as_bytes(),
        ),
        401,
        "unauthorized",
    );
    assert_error(&s.req("GET", "/v1/decisions", b""), 401, "unauthorized");
    assert_error(&s.req("DELETE", "/v1/decisions/a/c", b""), 401, "unauthorized");
    assert_eq!(s.req("GET", "/review", b"").status, 200);
    assert_eq!(s.req_auth("GET", "/v1/decisions", "t0ken-0123456789abcdef", b"").status, 200);
    let (st, _) = s.stop();
    assert!(st.success());
}

/// A semantic wait ends with its request: forty checks that ask to wait a minute for an indexer that
/// never finishes (paused at its first batch's links) are answered within --request-timeout-s, and
/// their blocking threads stop waiting then. Were they still waiting, the forty would outnumber the
/// blocking pool (--max-inflight + --bulk-slots + 16 = 25 threads) and the next read would queue
/// until its own timeout; health would not know.
#[cfg(all(feature = "semantic", feature = "failpoints"))]
#[test]
fn a_semantic_wait_ends_with_its_request() {
    let t = tempfile::tempdir().unwrap();
    let db = tiny_semantic_db(t.path(), |cfg| {
        (cfg.min_cosine, cfg.groups) = (Some(0.9), fpdb::semantic::Groups::Union);
    });
    let s = Server::start_env(
        &db,
        &[
            "--max-inflight",
            "8",
            "--max-queries",
            "8",
            "--bulk-slots",
            "1",
            "--request-timeout-s",
            "2",
        ],
        &[("FPDB_FAILPOINTS", "semantic.links=1")],
    );
    let words = fpdb::semantic::testkit::TINY_WORDS;
    let text = (0..12).map(|j| words[(j * 3) % words.len()]).collect::<Vec<_>>().join(" ");
    assert_eq!(put(&s, "d0", json!({ "text": text })).status, 200);
    let body = json!({"text": text, "wait_semantic_ms": 60000}).to_string();
    for wave in 0..5 {
        let started = std::time::Instant::now();
        let answers: Vec<Resp> = std::thread::scope(|sc| {
            let hs: Vec<_> = (0..8)
                .map(|_| sc.spawn(|| s.req("POST", "/v1/duplicates", body.as_bytes())))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for r in &answers {
            // At the deadline: the request's 503 `timeout`, or the wait's end a moment before it
            // (503 `semantic_pending`).
            let code = body_json(r)["error"]["code"].clone();
            assert!(
                r.status == 503 && (code == "timeout" || code == "semantic_pending"),
                "wave {wave}: {} {}",
                r.status,
                r.text()
            );
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(6),
            "wave {wave}: {:?}",
            started.elapsed()
        );
    }
    let started = std::time::Instant::now();
    let r = s.req("GET", "/v1/stats", b"");
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(
        started.elapsed() < std::time::Duration::from_secs(1),
        "a read waited {:?} for a blocking thread: the waits outlived their requests",
        started.elapsed()
    );
}
