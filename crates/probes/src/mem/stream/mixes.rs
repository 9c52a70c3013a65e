//! The streaming loops: what a pass does to each element it visits, over one to four arrays
//! of 64-bit elements, every element or every 4th.
//!
//! Each loop is one plain `while` over a slice that the compiler vectorises. It is compiled
//! twice: for the baseline of the target (SSE2 on x86-64, NEON on aarch64) and, on x86-64, for
//! AVX2, picked at run time when the CPU has it, so that the figure is what well-compiled code
//! gets on this machine. The loops are never inlined into the timing loop, so that successive
//! calls cannot be merged.

use std::hint::black_box;
use std::ops::Range;

/// What a pass does to each element index, from reads only to writes only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mix {
    /// Sum `a`.
    Read,
    /// `a[i] = b[i] + c[i] + d[i]`: three reads to a write.
    ThreeToOne,
    /// `a[i] = b[i] + 3·c[i]`: two reads to a write.
    Triad,
    /// `b[i] = a[i]`: a read to a write.
    Copy,
    /// `a[i] = 2·a[i]`: a read and a write of the same element.
    Modify,
    /// Store a value in `a`.
    Write,
}

impl Mix {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Mix::Read => "read",
            Mix::ThreeToOne => "3to1",
            Mix::Triad => "triad",
            Mix::Copy => "copy",
            Mix::Modify => "modify",
            Mix::Write => "write",
        }
    }

    /// The mix in words, for a result's method.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Mix::Read => "reads only (a sum)",
            Mix::ThreeToOne => "3:1 reads to writes (a[i] = b[i] + c[i] + d[i])",
            Mix::Triad => "2:1 reads to writes (triad, a[i] = b[i] + 3·c[i])",
            Mix::Copy => "1:1 reads to writes (copy, b[i] = a[i])",
            Mix::Modify => "1:1 reads to writes of the same element (a[i] = 2·a[i])",
            Mix::Write => "writes only (a value stored)",
        }
    }

    /// The arrays it passes over together, one after another in one buffer.
    pub(crate) fn arrays(self) -> usize {
        match self {
            Mix::Read | Mix::Write | Mix::Modify => 1,
            Mix::Copy => 2,
            Mix::Triad => 3,
            Mix::ThreeToOne => 4,
        }
    }

    /// Bytes read plus bytes written per element index, as STREAM counts them (the line a
    /// store must first fetch, write-allocate, is not counted).
    pub(crate) fn bytes_per_index(self) -> u64 {
        let element = size_of::<u64>() as u64;
        match self {
            Mix::Modify => 2 * element,
            _ => element * self.arrays() as u64,
        }
    }
}

/// One loop: a mix, a stride and the instruction set it was compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Kernel {
    pub mix: Mix,
    /// Visit every element index (1) or every 4th (4).
    pub step: usize,
    avx2: bool,
}

/// The instruction set a result's loop was compiled for.
pub(crate) const VECTOR_ISA: latlab_engine::parameters::Key =
    latlab_engine::parameters::Key::new("vector_isa");

/// What the write loop stores; not a repeated byte, so that it cannot become a memset.
pub(crate) const WRITE_VALUE: u64 = 0x0123_4567_89AB_CDEF;

impl Kernel {
    /// The loop for `mix` and `step` (1 or 4), compiled for the widest vectors available.
    pub(crate) fn new(mix: Mix, step: usize) -> Kernel {
        assert!(step == 1 || step == 4, "step {step} has no compiled loop");
        Kernel {
            mix,
            step,
            avx2: has_avx2(),
        }
    }

    /// The instruction set the loop was compiled for.
    pub(crate) fn vector_isa(self) -> &'static str {
        if self.avx2 {
            "AVX2 (256-bit)"
        } else if cfg!(target_arch = "aarch64") {
            "NEON (128-bit, baseline)"
        } else {
            "baseline (SSE2 128-bit on x86-64)"
        }
    }

    /// The length of each of the mix's arrays in a buffer of `words`.
    pub(crate) fn array_len(self, words: usize) -> usize {
        words / self.mix.arrays()
    }

    /// Element indices one pass over a buffer of `words` visits.
    pub(crate) fn indices_visited(self, words: usize) -> usize {
        self.array_len(words).div_ceil(self.step)
    }

    /// Bytes one pass over a buffer of `words` moves, as STREAM counts them.
    pub(crate) fn bytes_per_pass(self, words: usize) -> u64 {
        self.indices_visited(words) as u64 * self.mix.bytes_per_index()
    }

    /// One pass over the whole of `words`; returns the sum for reads and the first element
    /// otherwise.
    pub(crate) fn pass(self, words: &mut [u64]) -> u64 {
        let n = self.array_len(words.len());
        self.part(words, 0..n)
    }

    /// The indices `range` of each array of `words` (arrays of [`Kernel::array_len`]).
    pub(crate) fn part(self, words: &mut [u64], range: Range<usize>) -> u64 {
        let n = self.array_len(words.len());
        let one = self.mix.arrays() == 1;
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is only set when the CPU reports AVX2.
            return unsafe {
                match one {
                    true => avx2::one_array(self.mix, self.step, &mut words[range]),
                    false => avx2::many_arrays(self.mix, self.step, words, n, range),
                }
            };
        }
        match one {
            true => baseline::one_array(self.mix, self.step, &mut words[range]),
            false => baseline::many_arrays(self.mix, self.step, words, n, range),
        }
    }
}

fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The range `range` of the first array of `words` (arrays `n` long, one after another),
/// to be written, and of the next `more` arrays, to be read.
#[inline(always)]
fn arrays<const MORE: usize>(
    words: &mut [u64],
    n: usize,
    range: Range<usize>,
) -> (&mut [u64], [&[u64]; MORE]) {
    let (a, rest) = words.split_at_mut(n);
    let read = std::array::from_fn(|k| &rest[k * n..][range.clone()]);
    (&mut a[range], read)
}

#[inline(always)]
fn read<const STEP: usize>(a: &[u64]) -> u64 {
    let mut sum = 0u64;
    let mut i = 0;
    while i < a.len() {
        sum = sum.wrapping_add(a[i]);
        i += STEP;
    }
    sum
}

#[inline(always)]
fn write<const STEP: usize>(a: &mut [u64], value: u64) -> u64 {
    let mut i = 0;
    while i < a.len() {
        a[i] = value;
        i += STEP;
    }
    a.first().copied().unwrap_or(0)
}

#[inline(always)]
fn modify<const STEP: usize>(a: &mut [u64]) -> u64 {
    let mut i = 0;
    while i < a.len() {
        a[i] = a[i].wrapping_mul(2);
        i += STEP;
    }
    a.first().copied().unwrap_or(0)
}

#[inline(always)]
fn copy<const STEP: usize>((a, [b]): (&mut [u64], [&[u64]; 1])) -> u64 {
    let b = &b[..a.len()];
    let mut i = 0;
    while i < a.len() {
        a[i] = b[i];
        i += STEP;
    }
    a.first().copied().unwrap_or(0)
}

#[inline(always)]
fn triad<const STEP: usize>((a, [b, c]): (&mut [u64], [&[u64]; 2])) -> u64 {
    let (b, c) = (&b[..a.len()], &c[..a.len()]);
    let mut i = 0;
    while i < a.len() {
        a[i] = b[i].wrapping_add(c[i].wrapping_mul(3));
        i += STEP;
    }
    a.first().copied().unwrap_or(0)
}

#[inline(always)]
fn three_to_one<const STEP: usize>((a, [b, c, d]): (&mut [u64], [&[u64]; 3])) -> u64 {
    let n = a.len();
    let (b, c, d) = (&b[..n], &c[..n], &d[..n]);
    let mut i = 0;
    while i < a.len() {
        a[i] = b[i].wrapping_add(c[i]).wrapping_add(d[i]);
        i += STEP;
    }
    a.first().copied().unwrap_or(0)
}

/// Defines `pass`, the dispatch to every loop, with the given attributes and qualifiers, so
/// that each instruction set gets its own copy of the same source. A one-array mix goes to a
/// function of its own that gets its slice as it is: one function for every mix slowed the
/// every-4th loops of small sets (the book's memory methods, "The figures behind the
/// rules").
macro_rules! compiled_loops {
    ($(#[$attr:meta])* [$($qualifiers:tt)*]) => {
        $(#[$attr])*
        #[inline(never)]
        $($qualifiers)* fn one_array(mix: Mix, step: usize, a: &mut [u64]) -> u64 {
            match (mix, step) {
                (Mix::Read, 1) => read::<1>(a),
                (Mix::Read, _) => read::<4>(a),
                (Mix::Write, 1) => write::<1>(a, black_box(WRITE_VALUE)),
                (Mix::Write, _) => write::<4>(a, black_box(WRITE_VALUE)),
                (Mix::Modify, 1) => modify::<1>(a),
                _ => modify::<4>(a),
            }
        }

        $(#[$attr])*
        #[inline(never)]
        $($qualifiers)* fn many_arrays(
            mix: Mix,
            step: usize,
            words: &mut [u64],
            n: usize,
            range: Range<usize>,
        ) -> u64 {
            match (mix, step) {
                (Mix::Copy, 1) => copy::<1>(arrays(words, n, range)),
                (Mix::Copy, _) => copy::<4>(arrays(words, n, range)),
                (Mix::Triad, 1) => triad::<1>(arrays(words, n, range)),
                (Mix::Triad, _) => triad::<4>(arrays(words, n, range)),
                (Mix::ThreeToOne, 1) => three_to_one::<1>(arrays(words, n, range)),
                _ => three_to_one::<4>(arrays(words, n, range)),
            }
        }
    };
}

mod baseline {
    use super::*;
    compiled_loops!([pub(super)]);
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::*;
    compiled_loops!(
        /// # Safety
        /// The CPU must support AVX2.
        #[target_feature(enable = "avx2")]
        [pub(super) unsafe]
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIXES: [Mix; 6] = [
        Mix::Read,
        Mix::ThreeToOne,
        Mix::Triad,
        Mix::Copy,
        Mix::Modify,
        Mix::Write,
    ];

    /// Four arrays of `n` elements: `a` 1, 2, 3 …, `b` ten times that, `c` a hundred
    /// times, `d` a thousand times.
    fn arrays(n: usize) -> Vec<u64> {
        (0..4)
            .flat_map(|k| (1..=n as u64).map(move |i| i * 10u64.pow(k)))
            .collect()
    }

    /// What element `i` of `a` holds after `mix`, when visited, from the arrays above.
    fn expected(mix: Mix, original: &[u64], n: usize, i: usize) -> u64 {
        let at = |array: usize| original[array * n + i];
        match mix {
            Mix::Read => at(0),
            Mix::Write => WRITE_VALUE,
            Mix::Modify => 2 * at(0),
            Mix::Copy => at(1),
            Mix::Triad => at(1) + 3 * at(2),
            Mix::ThreeToOne => at(1) + at(2) + at(3),
        }
    }

    /// Every loop does to each element index of a range what its name says, every element
    /// or every 4th, and nothing outside the range or to the arrays it reads.
    #[test]
    fn loops_do_what_they_say() {
        let n = 103;
        for mix in MIXES {
            for step in [1, 4] {
                let kernel = Kernel::new(mix, step);
                let words = mix.arrays() * n;
                let original = arrays(n)[..words].to_vec();
                let mut data = original.clone();
                let returned = kernel.part(&mut data, 8..96);
                for i in 0..n {
                    let visited = (8..96).contains(&i) && (i - 8) % step == 0;
                    let want = if visited {
                        expected(mix, &original, n, i)
                    } else {
                        original[i]
                    };
                    assert_eq!(data[i], want, "{mix:?}, step {step}, element {i}");
                }
                assert_eq!(data[n..], original[n..], "{mix:?}: the read arrays");
                if mix == Mix::Read {
                    let sum: u64 = (8..96).step_by(step).map(|i| original[i]).sum();
                    assert_eq!(returned, sum);
                }
                assert_eq!(kernel.indices_visited(words), n.div_ceil(step));
            }
        }
        assert_eq!(Mix::Triad.bytes_per_index(), 24);
        assert_eq!(Mix::Modify.bytes_per_index(), 16);
    }

    #[test]
    fn the_baseline_loops_agree_with_the_fastest() {
        let mut data: Vec<u64> = (0..1000).map(|i| i * 7).collect();
        for step in [1, 4] {
            let mut copy = data.clone();
            let baseline = baseline::one_array(Mix::Read, step, &mut copy);
            assert_eq!(baseline, Kernel::new(Mix::Read, step).pass(&mut data));
        }
    }
}
