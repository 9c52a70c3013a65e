//! Anonymous memory mapped for a measurement: the one mmap wrapper of the probes.
//!
//! The memory probes map their working sets themselves rather than using the heap, so that
//! the page size is a choice recorded with the result (`MADV_HUGEPAGE` on request,
//! `MADV_NOHUGEPAGE` otherwise) and so that a failed allocation is an error, not an abort.
//! The IPC probes map pages shared with the processes they fork. Either way every page is
//! touched at once, so that no first-touch fault lands in a measurement.

use latlab_engine::environment::kib_field;
use rustix::mm::{Advice, MapFlags, ProtFlags, madvise, mmap_anonymous, munmap};
use std::io;
use std::ptr::NonNull;

/// An anonymous mapping, unmapped on drop.
pub(crate) struct MappedBuffer {
    base: NonNull<u8>,
    len: usize,
}

impl MappedBuffer {
    /// Maps `len` bytes (at least one page), advising huge pages or not, and touches every
    /// page so that no first-touch fault lands in a measurement.
    pub(crate) fn new(len: usize, huge_pages: bool) -> io::Result<MappedBuffer> {
        let advice = if huge_pages {
            Advice::LinuxHugepage
        } else {
            Advice::LinuxNoHugepage
        };
        MappedBuffer::map(len, MapFlags::PRIVATE, Some(advice))
    }

    /// Maps `len` bytes (at least one page) shared with the processes forked after it.
    pub(crate) fn shared(len: usize) -> io::Result<MappedBuffer> {
        MappedBuffer::map(len, MapFlags::SHARED, None)
    }

    fn map(len: usize, sharing: MapFlags, advice: Option<Advice>) -> io::Result<Self> {
        let len = len.max(page_size());
        let protection = ProtFlags::READ | ProtFlags::WRITE;
        // SAFETY: a fresh anonymous mapping; the kernel chooses the address.
        let raw = unsafe { mmap_anonymous(std::ptr::null_mut(), len, protection, sharing)? };
        let buffer = MappedBuffer {
            base: NonNull::new(raw.cast()).expect("mmap never returns null on success"),
            len,
        };
        if let Some(advice) = advice {
            // SAFETY: the range is exactly the mapping made above. Advice that the kernel
            // does not support (no THP) is harmless to ignore: the page size is then the
            // base one.
            let _ = unsafe { madvise(raw, len, advice) };
        }
        for offset in (0..len).step_by(page_size()) {
            // SAFETY: `offset` is inside the mapping, which is readable and writable.
            unsafe { buffer.base.as_ptr().add(offset).write_volatile(0) };
        }
        Ok(buffer)
    }

    pub(crate) fn as_mut_ptr(&self) -> *mut u8 {
        self.base.as_ptr()
    }

    /// Bytes mapped.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The mapping as 64-bit words (a mapping is page-aligned, so they are aligned too).
    pub(crate) fn as_words_mut(&mut self) -> &mut [u64] {
        // SAFETY: the mapping is readable, writable, initialised (zero-filled by the kernel),
        // aligned for u64, and borrowed mutably from `self` for the slice's lifetime.
        unsafe {
            std::slice::from_raw_parts_mut(self.base.as_ptr().cast(), self.len / size_of::<u64>())
        }
    }

    /// How many bytes of the mapping the kernel backs with transparent huge pages now
    /// (`AnonHugePages` in /proc/self/smaps); `None` when that cannot be read.
    /// The kernel may merge the mapping with a neighbour of the same kind, so the area
    /// reported is the one that contains it.
    pub(crate) fn huge_page_bytes(&self) -> Option<u64> {
        let smaps = latlab_doors::input::system_text("/proc/self/smaps")?;
        let base = self.base.as_ptr() as usize;
        let contains_base = |line: &str| {
            let range = line.split_whitespace().next()?;
            let (start, end) = range.split_once('-')?;
            let start = usize::from_str_radix(start, 16).ok()?;
            let end = usize::from_str_radix(end, 16).ok()?;
            Some((start..end).contains(&base))
        };
        let mut offset = 0;
        for line in smaps.split_inclusive('\n') {
            if contains_base(line) == Some(true) {
                // Every area lists AnonHugePages, so the first one after its header is ours.
                return kib_field(&smaps[offset..], "AnonHugePages");
            }
            offset += line.len();
        }
        None
    }
}

impl Drop for MappedBuffer {
    fn drop(&mut self) {
        // SAFETY: the mapping was made by `new` with this base and length, and no reference
        // into it outlives the buffer.
        let _ = unsafe { munmap(self.base.as_ptr().cast(), self.len) };
    }
}

/// The base page size.
pub(crate) fn page_size() -> usize {
    rustix::param::page_size()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_pages_hold_no_huge_pages() {
        let buffer = MappedBuffer::new(8 << 20, false).unwrap();
        assert_eq!(buffer.huge_page_bytes(), Some(0));
    }
}
