//! The cache hierarchy as the kernel describes it in
//! /sys/devices/system/cpu/cpu0/cache/index*/. A VM may describe it wrongly; the memory
//! probes measure it independently and compare.

use super::sysfs::{parse_cpu_list, parse_size, read_trimmed};

/// One cache level of CPU 0.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CacheInfo {
    pub level: u8,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    pub size_bytes: u64,
    pub line_bytes: Option<u64>,
    /// How many logical CPUs share this cache.
    pub shared_by_cpus: usize,
}

impl CacheInfo {
    pub(crate) fn synthetic(level: u8, kind: &str, size_bytes: u64, shared: usize) -> CacheInfo {
        CacheInfo {
            level,
            kind: kind.into(),
            size_bytes,
            line_bytes: Some(64),
            shared_by_cpus: shared,
        }
    }
}

pub(crate) fn collect() -> Vec<CacheInfo> {
    let Ok(entries) = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache") else {
        return Vec::new();
    };
    let mut caches: Vec<CacheInfo> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("index"))
        .filter_map(|e| {
            let dir = e.path();
            Some(CacheInfo {
                level: read_trimmed(dir.join("level"))?.parse().ok()?,
                kind: read_trimmed(dir.join("type"))?,
                size_bytes: parse_size(&read_trimmed(dir.join("size"))?)?,
                line_bytes: read_trimmed(dir.join("coherency_line_size"))
                    .and_then(|s| s.parse().ok()),
                shared_by_cpus: read_trimmed(dir.join("shared_cpu_list"))
                    .and_then(|l| parse_cpu_list(&l))
                    .map_or(1, |cpus| cpus.len()),
            })
        })
        .collect();
    caches.sort_by(|a, b| (a.level, &a.kind).cmp(&(b.level, &b.kind)));
    if let Some(bytes) = claimed_last_cache_bytes() {
        claim_last_cache(&mut caches, bytes);
    }
    caches
}

/// The sizes of the data (and unified) caches in `caches`, smallest first, each once:
/// `[.., below, last]` are the last level and the one below it.
pub fn data_cache_sizes(caches: &[CacheInfo]) -> Vec<u64> {
    let mut sizes: Vec<u64> = (caches.iter())
        .filter(|c| c.kind != "Instruction")
        .map(|c| c.size_bytes)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// The test hook that makes the kernel claim a last-level cache of its value in bytes,
/// whatever sysfs says: a run planned and measured as on a guest whose kernel claims far
/// more cache than the guest gets, on any machine.
/// The run's notes say when it is set.
pub const CLAIM_LAST_CACHE_VARIABLE: &str = "LATLAB_CLAIM_LAST_CACHE_BYTES";

/// The size [`CLAIM_LAST_CACHE_VARIABLE`] sets, if it is set to a size it takes
/// ([`claimed_last_cache`]).
pub fn claimed_last_cache_bytes() -> Option<u64> {
    claimed_last_cache().ok().flatten()
}

/// The largest last-level cache the hook takes: a tebibyte.
const MAX_CLAIMED_BYTES: u64 = 1 << 40;

/// What [`CLAIM_LAST_CACHE_VARIABLE`] says: nothing when it is not set, a size in bytes
/// (a whole number from 1 to a tebibyte), or why its value is not one (it is then ignored).
pub fn claimed_last_cache() -> Result<Option<u64>, String> {
    let Some(value) = std::env::var_os(CLAIM_LAST_CACHE_VARIABLE) else {
        return Ok(None);
    };
    let text = value.to_string_lossy();
    let shown: String = text.chars().take(40).collect();
    (text.trim().parse::<u64>().ok())
        .filter(|bytes| (1..=MAX_CLAIMED_BYTES).contains(bytes))
        .map(Some)
        .ok_or_else(|| {
            format!(
                "{CLAIM_LAST_CACHE_VARIABLE} is set to {shown:?}, not a whole number of bytes \
                 from 1 to {MAX_CLAIMED_BYTES}: ignored, the caches are as sysfs says"
            )
        })
}

/// Gives the largest of `caches` the size `bytes`.
fn claim_last_cache(caches: &mut [CacheInfo], bytes: u64) {
    if let Some(last) = caches.iter_mut().max_by_key(|c| c.size_bytes) {
        last.size_bytes = bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The claimed size goes to the largest level, whatever its number, and only to it.
    #[test]
    fn a_claimed_last_cache_replaces_the_largest_level() {
        let mut caches = vec![
            CacheInfo::synthetic(1, "Data", 48 << 10, 1),
            CacheInfo::synthetic(2, "Unified", 1 << 20, 1),
            CacheInfo::synthetic(3, "Unified", 32 << 20, 2),
        ];
        claim_last_cache(&mut caches, 260 << 20);
        let sizes: Vec<u64> = caches.iter().map(|c| c.size_bytes).collect();
        assert_eq!(sizes, [48 << 10, 1 << 20, 260 << 20]);
    }
}
