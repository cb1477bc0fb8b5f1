//! Damaged bytes are detected and contained: `check` names the document and file, queries touching
//! it fail with a corruption error, other documents keep working; torn tails and orphans are
//! cleaned up on open.

use crate::common;

use std::io::{Seek, SeekFrom, Write};

use common::{db_of_20, edit, passage, rewrite_doc_record, text, vocab};
use fpdb::{Db, Error, Options, QueryOptions};

fn flip(path: &std::path::Path, offset: u64) {
    let mut f = std::fs::OpenOptions::new().read(true).write(true).open(path).unwrap();
    let mut b = [0u8; 1];
    use std::io::Read;
    f.seek(SeekFrom::Start(offset)).unwrap();
    f.read_exact(&mut b).unwrap();
    f.seek(SeekFrom::Start(offset)).unwrap();
    f.write_all(&[b[0] ^ 0x5A]).unwrap();
}

#[test]
fn a_flipped_shingle_byte_is_reported_and_contained() {
    for segment_size in [64 << 20, 8 << 10] {
        // Large segments: the damaged record is in the active segment (positioned reads);
        // small ones: in a sealed, memory-mapped segment.
        let dir = tempfile::tempdir().unwrap();
        let (path, texts) = db_of_20(dir.path(), segment_size);
        let victim = {
            let db = Db::open(&path).unwrap();
            db.get("k5").unwrap().unwrap()
        };
        let seg = path
            .join("segments")
            .join(fpdb::internals::segment::file_name(victim.record.segment));
        flip(&seg, victim.record.offset + fpdb::internals::segment::RECORD_HEADER as u64 + 13);

        let db = Db::open_with(
            &path,
            Options {
                segment_size,
                ..Options::default()
            },
        )
        .unwrap();
        let rep = db.check().unwrap();
        assert_eq!(rep.faults.len(), 1, "{:?}", rep.faults);
        let f = &rep.faults[0];
        assert_eq!((f.doc, f.key.as_deref()), (Some(victim.id), Some("k5")));
        assert!(
            f.path.ends_with(&fpdb::internals::segment::file_name(victim.record.segment)) && f.what.contains("checksum"),
            "{f:?}"
        );

        // A query whose candidates include the damaged document fails loudly...
        let v = vocab();
        let near = text(&edit(&v, &passage(&v, 150, 5), 1, 1));
        match db.query(&near, &QueryOptions::default()) {
            Err(e @ Error::Corruption { .. }) => assert!(e.to_string().contains("fpdb check"), "{e}"),
            other => panic!("expected a corruption error, got {other:?}"),
        }
        // ...while the others still answer.
        for i in [0usize, 7, 19] {
            assert_eq!(db.query(&texts[i], &QueryOptions::default()).unwrap()[0].key, format!("k{i}"));
        }
        // Deleting (or re-inserting) the damaged document repairs the database.
        db.delete("k5").unwrap();
        assert!(db.check().unwrap().faults.is_empty());
    }
}

#[test]
fn a_damaged_doc_record_is_reported_and_the_rest_still_opens() {
    let dir = tempfile::tempdir().unwrap();
    let (path, texts) = db_of_20(dir.path(), 64 << 20);
    let id = Db::open(&path).unwrap().get("k3").unwrap().unwrap().id;
    {
        // Overwrite the record with bytes of the right version but a wrong body.
        let rp = path.join("rocksdb");
        let names = rocksdb::DB::list_cf(&rocksdb::Options::default(), &rp).unwrap();
        let raw = rocksdb::DB::open_cf(&rocksdb::Options::default(), &rp, &names).unwrap();
        raw.put_cf(raw.cf_handle("docs").unwrap(), id.to_be_bytes(), [1u8, 0xFF, 0x01])
            .unwrap();
    }
    let db = Db::open(&path).unwrap();
    let rep = db.check().unwrap();
    assert!(
        rep.faults.iter().any(|f| f.doc == Some(id) && f.what.contains("does not decode")),
        "{:?}",
        rep.faults
    );
    assert_eq!(db.query(&texts[8], &QueryOptions::default()).unwrap()[0].key, "k8");
}

#[test]
fn torn_tails_are_truncated_and_orphans_removed_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let (path, texts) = db_of_20(dir.path(), 64 << 20);
    let seg = path.join("segments").join(fpdb::internals::segment::file_name(0));
    let len = std::fs::metadata(&seg).unwrap().len();
    std::fs::OpenOptions::new()
        .append(true)
        .open(&seg)
        .unwrap()
        .write_all(b"FPSR half a record")
        .unwrap();
    let orphan = path.join("segments").join(fpdb::internals::segment::file_name(77));
    std::fs::write(&orphan, b"FPDBSEG1 never committed").unwrap();
    let db = Db::open(&path).unwrap();
    assert_eq!(db.recovery().truncated_bytes, 18);
    assert_eq!(db.recovery().orphans_removed, vec![orphan.clone()]);
    assert_eq!(std::fs::metadata(&seg).unwrap().len(), len);
    assert!(!orphan.exists());
    assert!(db.check().unwrap().faults.is_empty());
    assert_eq!(db.query(&texts[2], &QueryOptions::default()).unwrap()[0].key, "k2");
}

/// A doc record whose shingle `count` says 4 G shingles (a 16 GiB record) is reported as corruption
/// naming the segment file, the offset and the doc, on both read paths (positioned reads of the
/// active segment, the map of a sealed one) and in `check`; nothing is sized from the count.
#[test]
fn a_huge_shingle_count_is_reported_not_allocated() {
    for segment_size in [64 << 20, 8 << 10] {
        let dir = tempfile::tempdir().unwrap();
        let (path, texts) = db_of_20(dir.path(), segment_size);
        let victim = Db::open(&path).unwrap().get("k5").unwrap().unwrap();
        rewrite_doc_record(&path, victim.id, |r| r.count = u32::MAX);
        let seg = fpdb::internals::segment::file_name(victim.record.segment);
        for read_only in [false, true] {
            let db = Db::open_with(
                &path,
                Options {
                    segment_size,
                    read_only,
                    ..Options::default()
                },
            )
            .unwrap();
            match db.shingles(victim.id) {
                Err(Error::Corruption { path, doc, what }) => {
                    assert!(path.ends_with(&seg), "{path:?}");
                    assert_eq!(doc, Some(victim.id));
                    assert!(what.contains(&format!("offset {}", victim.record.offset)), "{what}");
                }
                other => panic!("expected a corruption error, got {other:?}"),
            }
            let rep = db.check().unwrap();
            assert!(
                rep.faults.iter().any(|f| f.doc == Some(victim.id) && f.path.ends_with(&seg)),
                "{:?}",
                rep.faults
            );
            assert_eq!(db.query(&texts[8], &QueryOptions::default()).unwrap()[0].key, "k8");
        }
    }
}
