//! What the box's search for hard links costs at launch
//! (`aileron_cli::launch_box::HardLinks`, issue 30: set-up ≤ 50 ms): the
//! walk of a generated project of 10,000 files in 100 directories, 2,000
//! of them linked in pairs inside it (cargo's `target/`) and one to a file
//! outside, then the search of a writable cache for the missing name; and
//! the walk of this repository's own checkout (its `target/` included), a
//! large real project that the walk's limit cuts short.

use aileron_cli::launch_box::{HardLinks, WALK_LIMIT};
use criterion::{Criterion, criterion_group, criterion_main};
use std::path::{Path, PathBuf};

/// A project of `files` files, every fifth one linked in `target/`, and a
/// link to a file in `outside`.
fn project(root: &Path, files: usize) -> (PathBuf, PathBuf) {
    let (proj, outside) = (root.join("proj"), root.join("outside"));
    std::fs::create_dir_all(proj.join("target/debug")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    for i in 0..files {
        let dir = proj.join(format!("src/m{}", i % 100));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(format!("f{i}.rs"));
        std::fs::write(&file, "fn f() {}\n").unwrap();
        if i % 5 == 0 {
            std::fs::hard_link(&file, proj.join(format!("target/debug/f{i}"))).unwrap();
        }
    }
    std::fs::write(outside.join("notes"), "notes\n").unwrap();
    std::fs::hard_link(outside.join("notes"), proj.join("notes")).unwrap();
    (proj, outside)
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (proj, outside) = project(tmp.path(), 10_000);
    let roots = [proj.clone()];
    let links = HardLinks::walk(&roots);
    assert_eq!(links.leading_out(), vec![proj.join("notes")]);
    let mut g = c.benchmark_group("box_walks");
    g.bench_function("hard links of a 10,000-file project", |b| {
        b.iter(|| {
            let mut links = HardLinks::walk(&roots);
            links.find_elsewhere(std::slice::from_ref(&outside), &roots);
            links
        })
    });
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let checkout = [std::fs::canonicalize(checkout).unwrap()];
    let cut = HardLinks::walk(&checkout).cut_short;
    g.bench_function(
        format!("hard links of this checkout (cut short at {WALK_LIMIT}: {cut})"),
        |b| b.iter(|| HardLinks::walk(&checkout)),
    );
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
