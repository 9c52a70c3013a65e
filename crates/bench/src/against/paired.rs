//! The verdict of a paired comparison, from its blocks of slices.
//!
//! Each block times four slices of the same turns in the order A B B A (A the other build,
//! B this one), so that a drift of the machine over the block (a frequency that climbs, a
//! neighbour that starts) weighs on both sides alike; its ratio is B's two slices over A's.
//! The verdict is the median of the blocks' ratios with its distribution-free 95% interval
//! (order statistics: the sign test's), which a few blocks hit by a burst do not move.
//!
//! **The layout floor.** Two processes of one build differ by where their stack, heap and
//! mappings land (address randomisation, the allocator's alignment, a hash map's seed), and
//! a body can run a few per cent apart in them however long it is timed. So a benchmark is
//! timed in rounds, each in a fresh pair of processes, and the floor is how far the pooled
//! ratio can sit from the truth because of the pairs it happened to draw, read from how
//! far the rounds' median ratios scatter ([`floor`]). It is measured on every comparison,
//! for every benchmark; a verdict never calls a change that does not clear both the
//! interval and the floor.
//!
//! A burst that falls on both sides of a block (each side's slice of a pair more than
//! [`BURST`] times that side's median slice) is counted and named in the verdict, and kept:
//! the ratio of its block is as good as any, since both sides paid for it.

use latlab_engine::stats::{MIN_SAMPLES_FOR_INTERVAL, median_ci_ranks, median_in_place};
use latlab_report::stats::{mean_and_sd, normal_quantile, student_quantile};

/// How much slower than its side's median a slice is to be part of a burst.
const BURST: f64 = 1.25;

/// One block's four slices, in nanoseconds, in the order they ran: A, B, B, A.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Block {
    pub a: [f64; 2],
    pub b: [f64; 2],
}

impl Block {
    /// B's time over A's.
    pub fn ratio(&self) -> f64 {
        (self.b[0] + self.b[1]) / (self.a[0] + self.a[1])
    }
}

/// The ratio of this build's time to the other's, with its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Paired {
    pub blocks: usize,
    /// The fresh pairs of processes the blocks ran in.
    pub rounds: usize,
    pub ratio: f64,
    /// The 95% interval of the median ratio; `None` below six blocks.
    pub interval: Option<(f64, f64)>,
    /// The layout floor, as a share; `None` below two rounds.
    pub floor: Option<f64>,
    /// Each side's median slice, in nanoseconds.
    pub slice_a: f64,
    pub slice_b: f64,
    /// The pairs of slices (A with the B beside it) that a burst slowed on both sides.
    pub bursts: usize,
}

impl Paired {
    /// The verdict of `rounds` of blocks, each round a fresh pair of processes; `None` for
    /// no block.
    pub fn of(rounds: &[Vec<Block>]) -> Option<Paired> {
        let blocks: Vec<Block> = rounds.iter().flatten().copied().collect();
        if blocks.is_empty() {
            return None;
        }
        let mut ratios: Vec<f64> = blocks.iter().map(Block::ratio).collect();
        let ratio = median_in_place(&mut ratios);
        let interval = (blocks.len() >= MIN_SAMPLES_FOR_INTERVAL).then(|| {
            ratios.sort_by(f64::total_cmp);
            let (lo, hi) = median_ci_ranks(ratios.len(), 0.95);
            (ratios[lo], ratios[hi])
        });
        let side = |pick: fn(&Block) -> [f64; 2]| {
            let mut slices: Vec<f64> = blocks.iter().flat_map(pick).collect();
            median_in_place(&mut slices)
        };
        let (slice_a, slice_b) = (side(|b| b.a), side(|b| b.b));
        // A's first slice ran beside B's first, B's second beside A's second.
        let bursts = (blocks.iter())
            .flat_map(|b| [(b.a[0], b.b[0]), (b.a[1], b.b[1])])
            .filter(|&(a, b)| a > BURST * slice_a && b > BURST * slice_b)
            .count();
        let mut paired = Paired {
            blocks: blocks.len(),
            rounds: rounds.iter().filter(|r| !r.is_empty()).count(),
            ratio,
            interval,
            floor: None,
            slice_a,
            slice_b,
            bursts,
        };
        paired.floor = floor(rounds, paired.resolution());
        Some(paired)
    }

    /// Half the interval's width, as a share of the ratio (0.004 for ±0.4%): a change of
    /// more than this (past the layout floor) moves the whole interval past it, and is
    /// heard; `None` without an interval.
    pub fn resolution(&self) -> Option<f64> {
        self.interval.map(|(lo, hi)| (hi - lo) / 2.0 / self.ratio)
    }

    /// The smallest change either way it would have caught nine times in ten, as a share:
    /// the layout floor, and the interval's half-width taken out to the 90th percentile of
    /// where a change's interval lands (a change of the floor and the half-width alone is
    /// caught half the time); `None` without both.
    pub fn could_hear(&self) -> Option<f64> {
        let nine_in_ten = 1.0 + normal_quantile(0.9) / normal_quantile(0.975);
        Some(nine_in_ten * self.resolution()? + self.floor?)
    }

    /// Whether its interval's half-width and the layout floor together are under
    /// `precision` (a share): the sampling has done what was asked of it.
    pub fn precise_to(&self, precision: f64) -> bool {
        (self.resolution().zip(self.floor)).is_some_and(|(r, f)| r + f < precision)
    }

    /// Whether the blocks' interval lies past no change while the verdict is the same: the
    /// layout floor, and nothing else, kept it from a change (said on its line, never
    /// silently).
    pub fn inside_floor(&self) -> bool {
        let past_no_change = self.interval.is_some_and(|(lo, hi)| lo > 1.0 || hi < 1.0);
        past_no_change && self.verdict() == Verdict::Same
    }

    /// What the comparison says: slower or faster only where the whole interval lies past
    /// the layout floor.
    pub fn verdict(&self) -> Verdict {
        let Some(floor) = self.floor else {
            return Verdict::Same;
        };
        match self.interval {
            Some((lo, _)) if lo > 1.0 + floor => Verdict::Slower,
            Some((_, hi)) if hi < 1.0 / (1.0 + floor) => Verdict::Faster,
            _ => Verdict::Same,
        }
    }
}

/// The layout floor of `rounds`, as a share, given the half-width of the blocks' own
/// interval `resolution`; `None` below two rounds with blocks.
///
/// The blocks come in clusters, a round each, and what a round's blocks share (the pair of
/// processes it drew, whose layouts differ) their interval does not see. An interval that
/// does is read from the rounds themselves: the median of clustered blocks moves as the
/// median of the clusters does, with π/2 times the variance of their mean, so its
/// half-width is the 95% t quantile (rounds less one degrees of freedom) of the square root
/// of π/2 times the variance of the rounds' median ratios (in logarithms) over their number.
/// The floor is what that interval adds to the blocks' own: nothing where the pairs of
/// processes agree, and all of the difference where they do not.
fn floor(rounds: &[Vec<Block>], resolution: Option<f64>) -> Option<f64> {
    let medians: Vec<f64> = (rounds.iter())
        .filter(|round| !round.is_empty())
        .map(|round| {
            let mut ratios: Vec<f64> = round.iter().map(|b| b.ratio().ln()).collect();
            median_in_place(&mut ratios)
        })
        .collect();
    if medians.len() < 2 {
        return None;
    }
    let k = medians.len() as f64;
    let (_, sd) = mean_and_sd(&medians);
    let error = sd * (std::f64::consts::FRAC_PI_2 / k).sqrt();
    let clustered = (student_quantile(0.975, k - 1.0) * error).exp_m1();
    Some((clustered - resolution?).max(0.0))
}

/// Slower, faster, or the same as far as the interval and the floor can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Slower,
    Faster,
    Same,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Slower => "slower",
            Verdict::Faster => "faster",
            Verdict::Same => "same",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(ratios: &[f64]) -> Vec<Block> {
        (ratios.iter())
            .map(|&r| Block {
                a: [100.0, 100.0],
                b: [100.0 * r, 100.0 * r],
            })
            .collect()
    }

    /// `ratios` in rounds of `per_round` blocks.
    fn rounds(ratios: &[f64], per_round: usize) -> Vec<Vec<Block>> {
        blocks(ratios)
            .chunks(per_round)
            .map(<[Block]>::to_vec)
            .collect()
    }

    #[test]
    fn the_median_ratio_and_its_interval_judge_the_blocks() {
        let slower: Vec<f64> = (0..30).map(|i| 1.01 + 0.0004 * (i % 7) as f64).collect();
        let paired = Paired::of(&rounds(&slower, 10)).unwrap();
        assert!((paired.ratio - 1.0112).abs() < 0.001, "{paired:?}");
        assert_eq!(paired.verdict(), Verdict::Slower);
        let same: Vec<f64> = (0..30).map(|i| 0.995 + 0.001 * (i % 10) as f64).collect();
        let paired = Paired::of(&rounds(&same, 10)).unwrap();
        assert_eq!(paired.verdict(), Verdict::Same);
        assert!(paired.could_hear().unwrap() < 0.01);
        assert!(
            Paired::of(&rounds(&[1.1; 5], 5))
                .unwrap()
                .interval
                .is_none()
        );
        // One pair of processes measures no floor, and calls nothing.
        let one_pair = Paired::of(&rounds(&slower, 30)).unwrap();
        assert_eq!((one_pair.floor, one_pair.verdict()), (None, Verdict::Same));
    }

    /// Pairs of processes that differ by 2% from one another make a floor that a change of
    /// 1% inside each pair does not clear.
    #[test]
    fn a_change_inside_the_floor_the_pairs_of_processes_make_is_not_called() {
        let drawn = [1.02, 0.99, 1.03, 1.0, 0.985, 1.025];
        let ratios: Vec<f64> = (0..60)
            .map(|i| drawn[i / 10] * (1.0 + 0.0002 * (i % 3) as f64))
            .collect();
        let paired = Paired::of(&rounds(&ratios, 10)).unwrap();
        let floor = paired.floor.unwrap();
        assert!(floor > 0.01 && floor < 0.03, "{paired:?}");
        assert_eq!(paired.verdict(), Verdict::Same, "{paired:?}");
        // Pairs that all read this build slower, by 0% to 3%: the blocks' interval lies
        // past no change, the floor keeps the verdict, and says it did.
        let drawn = [1.03, 1.002, 1.028, 1.004, 1.001, 1.026];
        let ratios: Vec<f64> = (0..60)
            .map(|i| drawn[i / 10] * (1.0 + 0.0002 * (i % 3) as f64))
            .collect();
        let paired = Paired::of(&rounds(&ratios, 10)).unwrap();
        assert!(paired.interval.unwrap().0 > 1.0, "{paired:?}");
        assert_eq!(paired.verdict(), Verdict::Same, "{paired:?}");
        assert!(paired.inside_floor(), "{paired:?}");
    }

    #[test]
    fn a_burst_on_both_sides_is_counted_and_does_not_move_the_ratio() {
        let mut with_bursts = rounds(&[1.0; 20], 10);
        with_bursts[0][3] = Block {
            a: [300.0, 100.0],
            b: [330.0, 100.0],
        };
        with_bursts[0][9] = Block {
            a: [100.0, 90.0],
            b: [100.0, 400.0],
        };
        let paired = Paired::of(&with_bursts).unwrap();
        assert_eq!(paired.bursts, 1, "{paired:?}");
        assert!(!paired.inside_floor());
        assert_eq!(paired.ratio, 1.0);
        assert_eq!(paired.verdict(), Verdict::Same);
    }
}
