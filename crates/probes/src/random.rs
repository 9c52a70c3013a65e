//! The one pseudo-random generator of the probes: SplitMix64 with a fixed seed per use, so
//! that every run visits the same ring, reads the same offsets and branches on the same
//! pattern. Nothing here is for secrets; it only has to defeat prefetchers and predictors.

/// SplitMix64 (Steele, Lea and Flood): 64 bits of state, every output bit mixed.
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    pub(crate) fn seeded(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (`bound` > 0); the modulo bias is far below what a timing can
    /// see for the bounds used here.
    pub(crate) fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }

    /// Fisher–Yates.
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shuffle_is_a_permutation_and_the_same_every_time() {
        let shuffled = |seed| {
            let mut items: Vec<u32> = (0..1000).collect();
            SplitMix64::seeded(seed).shuffle(&mut items);
            items
        };
        let once = shuffled(7);
        assert_eq!(once, shuffled(7));
        assert_ne!(once, shuffled(8));
        let mut sorted = once.clone();
        sorted.sort_unstable();
        assert!(sorted.iter().copied().eq(0..1000));
        assert!(once.iter().zip(0..).filter(|(a, b)| **a == *b).count() < 20);
    }

    #[test]
    fn bits_are_balanced() {
        let mut rng = SplitMix64::seeded(1);
        let ones: u32 = (0..10_000).map(|_| (rng.next_u64() >> 32) as u32 & 1).sum();
        assert!((4_500..5_500).contains(&ones), "{ones} ones in 10000");
    }
}
