//! Every file under a directory with its bytes: what "byte-identical output" compares
//! (sweeps under other thread counts and shards, reproduce reruns). Included by path
//! like `shared.rs`.

use std::collections::BTreeMap;
use std::path::Path;

/// Every file under `dir` (relative path → bytes).
pub fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, d: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                out.insert(p.strip_prefix(base).unwrap().display().to_string(), std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}
