//! The output discipline (`pgraphrag_data::output`): atomic writes, refusals of links and
//! special files, the same-file check.
use std::path::{Path, PathBuf};

use pgraphrag_data::output::{
    FileKind, OutputError, Symlinks, WriteOptions, check_not_input, check_output, open_append,
    write_atomic_with,
};
use pgraphrag_data::{Error, write_atomic};

/// The temporary files the writer left in `dir` (`.NAME.XXXXXX.tmp`).
fn leftovers(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with('.') && n.ends_with(".tmp")
        })
        .collect()
}

#[test]
fn a_reader_sees_the_old_file_until_the_rename() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("scores.jsonl");
    std::fs::write(&p, "old\n").unwrap();
    write_atomic(&p, |w| {
        for i in 0..1000 {
            writeln!(w, "{{\"line\": {i}}}")?;
            if i % 100 == 0 {
                // Mid-write, the path still holds the whole old file.
                assert_eq!(std::fs::read_to_string(&p).unwrap(), "old\n");
            }
        }
        w.flush()?;
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old\n");
        // The new bytes are in a temporary file of the same folder.
        assert_eq!(leftovers(dir.path()).len(), 1);
        Ok(())
    })
    .unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    assert_eq!(text.lines().count(), 1000);
    assert!(
        leftovers(dir.path()).is_empty(),
        "the temporary file is gone"
    );
}

#[test]
fn a_failed_write_keeps_the_old_file_and_removes_the_temporary_one() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("index.bin");
    std::fs::write(&p, "old").unwrap();
    let e = write_atomic(&p, |w| {
        w.write_all(b"half of the new")?;
        Err(std::io::Error::other("killed"))
    })
    .unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e}");
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
    assert!(leftovers(dir.path()).is_empty());
    // A missing folder is an error unless asked to create it.
    let deep = dir.path().join("a/b/c.txt");
    assert!(write_atomic(&deep, |w| w.write_all(b"x")).is_err());
    write_atomic_with(&deep, WriteOptions::default().create_dirs(), |w| {
        w.write_all(b"x")
    })
    .unwrap();
    assert_eq!(std::fs::read(&deep).unwrap(), b"x");
}

#[cfg(unix)]
#[test]
fn links_are_refused_or_followed_as_asked() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.svg");
    let link = dir.path().join("link.svg");
    std::fs::write(&real, "old").unwrap();
    std::os::unix::fs::symlink("real.svg", &link).unwrap();
    let e = write_atomic(&link, |w| w.write_all(b"new")).unwrap_err();
    assert!(
        matches!(&e, Error::Output(OutputError::Symlink { .. })),
        "{e}"
    );
    assert!(
        e.to_string().contains("write to the target path instead"),
        "{e}"
    );
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "old");
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    // Followed: the target gets the new content, the link stays a link.
    write_atomic_with(&link, WriteOptions::default().follow_symlinks(), |w| {
        w.write_all(b"new")
    })
    .unwrap();
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    // A chain of links, and a dangling one (its target is created).
    let link2 = dir.path().join("link2.svg");
    std::os::unix::fs::symlink(&link, &link2).unwrap();
    assert_eq!(check_output(&link2, Symlinks::Follow).unwrap(), real);
    let dangling = dir.path().join("dangling");
    std::os::unix::fs::symlink("later.txt", &dangling).unwrap();
    write_atomic_with(&dangling, WriteOptions::default().follow_symlinks(), |w| {
        w.write_all(b"made")
    })
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("later.txt")).unwrap(),
        "made"
    );
    // A loop.
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::os::unix::fs::symlink("b", &a).unwrap();
    std::os::unix::fs::symlink("a", &b).unwrap();
    assert!(matches!(
        check_output(&a, Symlinks::Follow),
        Err(OutputError::LinkLoop { .. })
    ));
    // Appending refuses links too.
    assert!(open_append(&link, Symlinks::Refuse).is_err());
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
}

#[cfg(unix)]
#[test]
fn special_files_are_refused_without_opening_them() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let ok = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(ok.success());
    // Opening a FIFO for writing would block until a reader comes: these return at once.
    for e in [
        write_atomic(&fifo, |w| w.write_all(b"x")).unwrap_err(),
        Error::Output(open_append(&fifo, Symlinks::Refuse).unwrap_err()),
    ] {
        assert!(
            matches!(
                e,
                Error::Output(OutputError::NotRegular {
                    kind: FileKind::Fifo,
                    ..
                })
            ),
            "{e}"
        );
    }
    let e = check_output(Path::new("/dev/null"), Symlinks::Refuse).unwrap_err();
    assert!(e.to_string().contains("character device"), "{e}");
    let e = check_output(dir.path(), Symlinks::Refuse).unwrap_err();
    assert!(e.to_string().contains("is a folder"), "{e}");
    // A link to a device is refused after following it.
    let to_null = dir.path().join("null");
    std::os::unix::fs::symlink("/dev/null", &to_null).unwrap();
    assert!(matches!(
        check_output(&to_null, Symlinks::Follow),
        Err(OutputError::NotRegular {
            kind: FileKind::CharDevice,
            ..
        })
    ));
}

#[test]
fn the_same_file_is_found_however_it_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let split = dir.path().join("split.json");
    std::fs::write(&split, "[]").unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let other = dir.path().join("other.json");
    let inputs = [("--model", dir.path()), ("--split", split.as_path())];
    let same = |out: &Path| check_not_input(("--out", out), &inputs);
    // Through `.` and `..`.
    let e = same(&dir.path().join("sub/../split.json")).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "--out and --split are the same file ({}): choose another --out",
            dir.path().join("sub/../split.json").display()
        )
    );
    assert!(same(&dir.path().join("./split.json")).is_err());
    assert!(same(&other).is_ok());
    // A folder input matches only itself.
    assert!(same(&dir.path().join("sub")).is_ok());
    assert!(same(dir.path()).is_err());
    // A hard link: another name, the same inode.
    let hard = dir.path().join("sub/hard.json");
    std::fs::hard_link(&split, &hard).unwrap();
    assert!(same(&hard).is_err());
    #[cfg(unix)]
    {
        // A link to the input, and the input named through a linked folder.
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&split, &link).unwrap();
        assert!(same(&link).is_err());
        let via = dir.path().join("via");
        std::os::unix::fs::symlink(dir.path(), &via).unwrap();
        assert!(same(&via.join("split.json")).is_err());
        // An output that does not exist yet, whose folder resolves to an input's folder.
        let missing_in = dir.path().join("not-yet.json");
        assert!(
            check_not_input(
                ("--out", &via.join("not-yet.json")),
                &[("--in", &missing_in)]
            )
            .is_err()
        );
    }
}

#[test]
fn appending_keeps_what_is_there() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("rows.jsonl");
    std::fs::write(&p, "1\n").unwrap();
    use std::io::Write;
    open_append(&p, Symlinks::Refuse)
        .unwrap()
        .write_all(b"2\n")
        .unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "1\n2\n");
}

#[test]
fn a_write_removes_the_temporary_files_of_killed_writes_of_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("results.md");
    // What two earlier writes killed before their rename left, and files that only look alike.
    let stale = [".results.md.a1B2c3.tmp", ".results.md.ZZZZZZ.tmp"];
    let kept = [
        ".results.md.toolong7.tmp",
        ".results.md.abc.tmp",
        ".other.md.a1B2c3.tmp",
        "results.md.a1B2c3.tmp",
    ];
    for n in stale.iter().chain(&kept) {
        std::fs::write(dir.path().join(n), "part of a file").unwrap();
    }
    std::fs::create_dir(dir.path().join(".results.md.dir123.tmp")).unwrap();
    write_atomic(&p, |w| w.write_all(b"# results\n")).unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "# results\n");
    for n in stale {
        assert!(!dir.path().join(n).exists(), "{n} left behind");
    }
    for n in kept {
        assert!(dir.path().join(n).exists(), "{n} removed");
    }
    assert!(dir.path().join(".results.md.dir123.tmp").is_dir());
}
