//! Lookups in the small maps of a message (`params`, `_meta`, `clientInfo`: a handful of keys
//! each). With `serde_json`'s `preserve_order` a `Map` is an `IndexMap` hashed with SipHash,
//! so every `get` hashes its whole key (the `_meta` keys are 35–41 bytes) before it probes;
//! comparing the few keys in order is several times cheaper. Larger maps use the hash.

use serde_json::{Map, Value};

/// Up to this many entries, a lookup compares keys in order instead of hashing.
const LINEAR: usize = 8;

/// `map.get(key)`.
pub(crate) fn get<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if map.len() <= LINEAR { map.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v) } else { map.get(key) }
}

/// `map.contains_key(key)`.
pub(crate) fn contains(map: &Map<String, Value>, key: &str) -> bool {
    get(map, key).is_some()
}

/// `map.remove(key)`, which hashes only when the key is there: the optional members a request
/// rarely carries are checked on every request.
pub(crate) fn remove(map: &mut Map<String, Value>, key: &str) -> Option<Value> {
    if map.len() <= LINEAR && !contains(map, key) { None } else { map.remove(key) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The same answers as the map's own lookups, at every size around the threshold, for
    /// present and absent keys, keys that share a prefix, and the empty key.
    #[test]
    fn lookups_match_the_maps_own() {
        let keys: Vec<String> = (0..12)
            .map(|i| format!("io.modelcontextprotocol/key{i}"))
            .chain(["".to_owned(), "io.modelcontextprotocol/key".to_owned()])
            .collect();
        for size in 0..=keys.len() {
            let map: Map<String, Value> = keys[..size].iter().map(|k| (k.clone(), json!(k.len()))).collect();
            for probe in keys.iter().map(String::as_str).chain(["io.modelcontextprotocol/key1x", "absent"]) {
                assert_eq!(get(&map, probe), map.get(probe), "size {size}, key {probe:?}");
                assert_eq!(contains(&map, probe), map.contains_key(probe), "size {size}, key {probe:?}");
                let (mut ours, mut theirs) = (map.clone(), map.clone());
                assert_eq!(remove(&mut ours, probe), theirs.remove(probe), "size {size}, key {probe:?}");
                assert_eq!(ours, theirs, "size {size}, key {probe:?}");
                let order = |m: &Map<String, Value>| m.keys().cloned().collect::<Vec<_>>();
                assert_eq!(order(&ours), order(&theirs), "the same order after removing {probe:?}");
            }
        }
    }
}
