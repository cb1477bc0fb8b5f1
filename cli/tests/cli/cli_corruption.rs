//! A damaged database under the `fpdb` executable: a record that claims 4 G shingles is reported
//! as corruption, not allocated (tests/engine/corruption.rs has the library's side of it).

use crate::common::{db_of_20, rewrite_doc_record};
use fpdb::Db;

/// The same damage under a 2 GiB address-space limit (an unbounded reader would ask for a 16 GiB
/// buffer and abort the process): `fpdb check` and `fpdb export --shingle-sets` exit 4 with a
/// corruption message.
#[test]
fn a_huge_shingle_count_does_not_abort_a_memory_limited_process() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = db_of_20(dir.path(), 64 << 20);
    let victim = Db::open(&path).unwrap().get("k5").unwrap().unwrap();
    rewrite_doc_record(&path, victim.id, |r| r.count = u32::MAX);
    let seg = fpdb::internals::segment::file_name(victim.record.segment);
    for args in [&["check"][..], &["export", "--shingle-sets"][..]] {
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(r#"ulimit -v 2097152 && exec "$0" "$@""#)
            .arg(env!("CARGO_BIN_EXE_fpdb"))
            .args(args)
            .arg(&path)
            .output()
            .unwrap();
        let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(4), "fpdb {args:?}: {:?}\n{all}", out.status);
        // `check` compares the record with the committed length first; a read names the file size.
        let why = if args[0] == "check" {
            "runs past the committed length"
        } else {
            "does not fit in the file"
        };
        assert!(
            all.contains(&victim.record.offset.to_string()) && all.contains(&seg) && all.contains(why),
            "fpdb {args:?}:\n{all}"
        );
    }
}
