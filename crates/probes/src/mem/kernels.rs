//! The bandwidth loops: read (sum), write (store a value) and modify (`x = x * 2`) over 64-bit
//! elements, every element or every 4th.
//!
//! Each loop is one plain `while` over a slice that the compiler vectorises. It is compiled
//! twice: for the baseline of the target (SSE2 on x86-64, NEON on aarch64) and, on x86-64, for
//! AVX2, picked at run time when the CPU has it, so that the figure is what well-compiled code
//! gets on this machine. The loops are never inlined into the timing loop, so that successive
//! calls cannot be merged.

use std::hint::black_box;

/// What a pass does to each element it visits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Add the element to a running sum.
    Read,
    /// Store a value into the element.
    Write,
    /// Load, double and store back.
    Modify,
}

impl Access {
    pub(crate) const ALL: [Access; 3] = [Access::Read, Access::Write, Access::Modify];

    pub(crate) fn label(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
            Access::Modify => "modify",
        }
    }

    /// Bytes the loop reads plus bytes it writes per element visited, as STREAM counts them
    /// (the line a store must first fetch, write-allocate, is not counted).
    pub(crate) fn bytes_per_element(self) -> u64 {
        let element = std::mem::size_of::<u64>() as u64;
        match self {
            Access::Read | Access::Write => element,
            Access::Modify => 2 * element,
        }
    }
}

/// One loop: an access, a stride and the instruction set it was compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Kernel {
    pub access: Access,
    /// Visit every element (1) or every 4th (4).
    pub step: usize,
    avx2: bool,
}

/// What the write loop stores; not a repeated byte, so that it cannot become a memset.
const WRITE_VALUE: u64 = 0x0123_4567_89AB_CDEF;

impl Kernel {
    /// The loop for `access` and `step` (1 or 4), compiled for the widest vectors available.
    pub(crate) fn new(access: Access, step: usize) -> Kernel {
        assert!(step == 1 || step == 4, "step {step} has no compiled loop");
        Kernel {
            access,
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

    /// Elements one pass over `len` elements visits.
    pub(crate) fn elements_visited(self, len: usize) -> usize {
        len.div_ceil(self.step)
    }

    /// One pass over `data`; returns the sum for reads and the first element otherwise.
    pub(crate) fn pass(self, data: &mut [u64]) -> u64 {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is only set when the CPU reports AVX2.
            return unsafe { avx2::pass(self.access, self.step, data) };
        }
        baseline::pass(self.access, self.step, data)
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

#[inline(always)]
fn read<const STEP: usize>(data: &[u64]) -> u64 {
    let mut sum = 0u64;
    let mut i = 0;
    while i < data.len() {
        sum = sum.wrapping_add(data[i]);
        i += STEP;
    }
    sum
}

#[inline(always)]
fn write<const STEP: usize>(data: &mut [u64], value: u64) -> u64 {
    let mut i = 0;
    while i < data.len() {
        data[i] = value;
        i += STEP;
    }
    data.first().copied().unwrap_or(0)
}

#[inline(always)]
fn modify<const STEP: usize>(data: &mut [u64]) -> u64 {
    let mut i = 0;
    while i < data.len() {
        data[i] = data[i].wrapping_mul(2);
        i += STEP;
    }
    data.first().copied().unwrap_or(0)
}

/// Defines `pass`, the dispatch to every loop, with the given attributes and qualifiers, so
/// that each instruction set gets its own copy of the same source.
macro_rules! compiled_loops {
    ($(#[$attr:meta])* [$($qualifiers:tt)*]) => {
        $(#[$attr])*
        #[inline(never)]
        $($qualifiers)* fn pass(access: Access, step: usize, data: &mut [u64]) -> u64 {
            match (access, step) {
                (Access::Read, 1) => read::<1>(data),
                (Access::Read, _) => read::<4>(data),
                (Access::Write, 1) => write::<1>(data, black_box(WRITE_VALUE)),
                (Access::Write, _) => write::<4>(data, black_box(WRITE_VALUE)),
                (Access::Modify, 1) => modify::<1>(data),
                (Access::Modify, _) => modify::<4>(data),
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

    #[test]
    fn loops_do_what_they_say() {
        for step in [1, 4] {
            let mut data: Vec<u64> = (0..103).collect();
            let expected: u64 = data.iter().step_by(step).sum();
            assert_eq!(Kernel::new(Access::Read, step).pass(&mut data), expected);

            Kernel::new(Access::Modify, step).pass(&mut data);
            for (i, &x) in data.iter().enumerate() {
                let doubled = if i % step == 0 {
                    2 * i as u64
                } else {
                    i as u64
                };
                assert_eq!(x, doubled, "modify, step {step}, element {i}");
            }

            Kernel::new(Access::Write, step).pass(&mut data);
            let written = data.iter().step_by(step).all(|&x| x == WRITE_VALUE);
            let untouched = data
                .iter()
                .enumerate()
                .filter(|(i, _)| i % step != 0)
                .all(|(_, &x)| x != WRITE_VALUE);
            assert!(written && untouched, "write, step {step}");
            assert_eq!(
                Kernel::new(Access::Write, step).elements_visited(103),
                103usize.div_ceil(step)
            );
        }
    }

    #[test]
    fn the_baseline_loops_agree_with_the_fastest() {
        let mut data: Vec<u64> = (0..1000).map(|i| i * 7).collect();
        for step in [1, 4] {
            assert_eq!(
                baseline::pass(Access::Read, step, &mut data),
                Kernel::new(Access::Read, step).pass(&mut data)
            );
        }
    }
}
