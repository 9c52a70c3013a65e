//! Valgrind's client requests, as `valgrind.h` and `callgrind.h` define them: a sequence of
//! instructions that does nothing on a real CPU (rotations of a register that add up to a
//! whole turn, then a move of a register to itself) and that Valgrind recognises, reading
//! the request from the block a register points to. Written out here for the two
//! architectures the harness counts on; elsewhere every request is answered with its
//! default, as on a real CPU.

/// `VG_USERREQ_TOOL_BASE('C', 'T')`: callgrind's requests, in `callgrind.h`'s order.
const CALLGRIND: usize = ((b'C' as usize) << 24) | ((b'T' as usize) << 16);
const ZERO_STATS: usize = CALLGRIND + 1;
const TOGGLE_COLLECT: usize = CALLGRIND + 2;
const DUMP_STATS_AT: usize = CALLGRIND + 3;
/// `VG_USERREQ__RUNNING_ON_VALGRIND`, the core's.
const RUNNING_ON_VALGRIND: usize = 0x1001;

/// Sends `request` with `argument` (the rest zero); returns Valgrind's answer, or `default`
/// on a real CPU.
#[inline(always)]
fn request(default: usize, request: usize, argument: usize) -> usize {
    let block: [usize; 6] = [request, argument, 0, 0, 0, 0];
    let answer: usize;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the rotations of rdi add up to 128 bits and leave it as it was, and
    // `xchg rbx, rbx` changes nothing; under Valgrind the sequence reads `block` (through
    // rax) and writes its answer to rdx, as declared.
    unsafe {
        std::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            inout("rdx") default => answer,
            in("rax") block.as_ptr(),
            options(nostack, preserves_flags),
        );
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: the rotations of x12 add up to 128 bits and leave it as it was, and
    // `orr x10, x10, x10` changes nothing; under Valgrind the sequence reads `block`
    // (through x4) and writes its answer to x3, as declared.
    unsafe {
        std::arch::asm!(
            "ror x12, x12, #3",
            "ror x12, x12, #13",
            "ror x12, x12, #51",
            "ror x12, x12, #61",
            "orr x10, x10, x10",
            inout("x3") default => answer,
            in("x4") block.as_ptr(),
            options(nostack, preserves_flags),
        );
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = (request, block);
        answer = default;
    }
    answer
}

/// Whether this process runs under Valgrind.
pub(crate) fn running_on_valgrind() -> bool {
    request(0, RUNNING_ON_VALGRIND, 0) > 0
}

/// Callgrind: every cost counted so far set to zero.
pub(crate) fn zero_stats() {
    request(0, ZERO_STATS, 0);
}

/// Callgrind: counting switched on where it was off, and off where it was on.
#[inline(always)]
pub(crate) fn toggle_collect() {
    request(0, TOGGLE_COLLECT, 0);
}

/// Callgrind: the costs counted since the last dump or zeroing written to a file of their
/// own, described by `label`, and zeroed.
pub(crate) fn dump_stats_at(label: &std::ffi::CStr) {
    request(0, DUMP_STATS_AT, label.as_ptr() as usize);
}

#[cfg(test)]
mod tests {
    /// On a real CPU (as `cargo test` runs) every request does nothing and answers its
    /// default.
    #[test]
    fn requests_are_nothing_on_a_real_cpu() {
        assert!(!super::running_on_valgrind());
        assert_eq!(super::request(7, super::ZERO_STATS, 0), 7);
        let x = std::hint::black_box(41u64);
        super::toggle_collect();
        super::toggle_collect();
        assert_eq!(std::hint::black_box(x) + 1, 42);
    }
}
