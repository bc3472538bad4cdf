//! The count cache: token counts keyed by a 128-bit hash of the text, in 64 locked shards shared
//! between threads, so that a text is counted once per run (and, seeded from a count cache file,
//! once across runs). It only stores numbers; it never counts, prints or reads files.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::Mutex;

use crate::counts::Entry;
use crate::lock;
use crate::model::Tokens;

const SHARDS: usize = 64;

/// Counts by 128-bit text hash, shared between threads. Counts do not depend on the order in
/// which texts arrive, so sharing the cache cannot change any output. The lock is held only to
/// look a count up or put it in, never while counting, and the 64 shards each sit on their own
/// cache lines: two threads meet only when they want the same shard at the same moment.
pub struct CountCache {
    shards: Vec<Shard>,
    /// Whether counts kept from an earlier run were put in ([`CountCache::seed`]).
    pub(super) seeded: bool,
}

/// One shard, alone on two 64-byte cache lines (processors prefetch lines in pairs), so that
/// threads working in different shards never write to the same line.
#[repr(align(128))]
struct Shard(Mutex<HashMap<u128, Tokens, KeyHash>>);

/// The map's keys are already hashes of the texts: their high half serves as the map's hash (the
/// low half picks the shard).
#[derive(Debug, Default, Clone, Copy)]
struct KeyHash;

impl BuildHasher for KeyHash {
    type Hasher = KeyHasher;
    fn build_hasher(&self) -> KeyHasher {
        KeyHasher(0)
    }
}

struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only `u128` keys are hashed (`write_u128`); this keeps any other input well defined.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u128(&mut self, n: u128) {
        self.0 = (n >> 64) as u64;
    }
}

impl Default for CountCache {
    fn default() -> Self {
        CountCache {
            shards: (0..SHARDS).map(|_| Shard(Mutex::new(HashMap::default()))).collect(),
            seeded: false,
        }
    }
}

impl CountCache {
    /// The key a text's count is cached under, in memory and in a count cache file
    /// ([`crate::counts`]): its xxh3-128 hash.
    pub fn key(text: &str) -> u128 {
        xxhash_rust::xxh3::xxh3_128(text.as_bytes())
    }

    /// The cached count of `text`, computing it with `count` on a miss.
    pub fn get_or_count(&self, text: &str, count: impl FnOnce(&str) -> Tokens) -> Tokens {
        let key = CountCache::key(text);
        let shard = &self.shards[(key as usize) % SHARDS].0;
        if let Some(n) = lock(shard).get(&key) {
            return *n;
        }
        let n = count(text);
        lock(shard).insert(key, n);
        n
    }

    /// Puts in counts kept from an earlier run, keyed by [`CountCache::key`].
    pub fn seed(&mut self, entries: &[Entry]) {
        for shard in &mut self.shards {
            let map = shard.0.get_mut().unwrap_or_else(|e| e.into_inner());
            map.reserve(entries.len() / SHARDS + 1);
        }
        for &(key, tokens) in entries {
            let map = self.shards[(key as usize) % SHARDS].0.get_mut().unwrap_or_else(|e| e.into_inner());
            map.insert(key, tokens);
        }
        self.seeded |= !entries.is_empty();
    }

    /// Every count held, in no particular order (seeded ones included).
    pub fn entries(&self) -> Vec<Entry> {
        let mut out = Vec::with_capacity(self.len());
        for shard in &self.shards {
            out.extend(lock(&shard.0).iter().map(|(&k, &n)| (k, n)));
        }
        out
    }

    /// Number of distinct texts counted (or seeded).
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| lock(&s.0).len()).sum()
    }

    /// Whether nothing was counted yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
