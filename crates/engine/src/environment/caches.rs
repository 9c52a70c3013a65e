//! The cache hierarchy as the kernel describes it in
//! /sys/devices/system/cpu/cpu0/cache/index*/. A VM may describe it wrongly; the memory
//! probes measure it independently and compare.

use super::sysfs::{parse_cpu_list, parse_size, read_trimmed};
use serde::{Deserialize, Serialize};

/// One cache level of CPU 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    caches
}
