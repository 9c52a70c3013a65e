//! The objects loaded in this process as the profile reads them: the executable and its
//! shared libraries, each with its functions (symbol tables), their bytes, where the loader
//! put it in memory, and for the executable its source lines (DWARF line tables).

use object::{Object, ObjectSection, ObjectSymbol, SymbolKind};
use std::ffi::CStr;
use std::path::{Path, PathBuf};

/// One function of a symbol table, at its address in the file.
#[derive(Debug, Clone)]
pub(crate) struct Function {
    pub address: u64,
    pub size: u64,
    /// Demangled, without the hash.
    pub name: String,
}

/// One loaded object: the executable or a shared library.
pub(crate) struct LoadedObject {
    /// The file name, such as `libc.so.6`; empty for the executable.
    pub library: String,
    /// Run-time address less file address.
    bias: u64,
    /// Run-time address ranges of its loaded segments.
    ranges: Vec<(u64, u64)>,
    /// Sorted by address, one per address.
    functions: Vec<Function>,
    /// The file's bytes, for the instructions of a function; `None` when it cannot be read
    /// (the vDSO).
    bytes: Option<Vec<u8>>,
    /// Line tables, for the executable only.
    lines: Option<addr2line::Loader>,
}

/// An instruction pointer placed in its object and function.
pub(crate) struct Located<'p> {
    pub object: usize,
    /// The address in the object's file.
    pub address: u64,
    pub function: Option<&'p Function>,
}

/// Every object loaded in this process when it was read.
pub(crate) struct Process {
    objects: Vec<LoadedObject>,
}

impl Process {
    /// Reads the executable and its libraries; the error says why the executable could
    /// not be read (a library that cannot be read only goes without names).
    pub fn read() -> Result<Process, String> {
        let mut objects: Vec<LoadedObject> = loaded_segments()
            .into_iter()
            .map(|(path, bias, ranges)| LoadedObject::read(path, bias, ranges))
            .collect();
        match objects.first_mut() {
            Some(executable) if executable.bytes.is_some() => {
                executable.library.clear();
                executable.lines = executable.read_lines("/proc/self/exe");
                Ok(Process { objects })
            }
            _ => Err("cannot read this process's executable (/proc/self/exe)".into()),
        }
    }

    pub fn object(&self, index: usize) -> &LoadedObject {
        &self.objects[index]
    }

    /// The object and function a run-time address falls in.
    pub fn locate(&self, runtime: u64) -> Option<Located<'_>> {
        let (index, object) = (self.objects.iter().enumerate()).find(|(_, o)| {
            o.ranges
                .iter()
                .any(|&(lo, hi)| lo <= runtime && runtime < hi)
        })?;
        let address = runtime.wrapping_sub(object.bias);
        Some(Located {
            object: index,
            address,
            function: object.function_at(address),
        })
    }

    /// Whether the executable has a symbol table to name functions by.
    pub fn executable_has_symbols(&self) -> bool {
        !self.objects[0].functions.is_empty()
    }

    /// Whether the executable has line tables to name source lines by.
    pub fn executable_has_lines(&self) -> bool {
        self.objects[0].lines.is_some()
    }
}

/// The largest binary or library read for its symbols.
const MAX_OBJECT_BYTES: u64 = 4 << 30;

impl LoadedObject {
    fn read(path: PathBuf, bias: u64, ranges: Vec<(u64, u64)>) -> LoadedObject {
        let library = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // The binary and libraries the kernel says are mapped, read through the door in.
        let bytes =
            latlab_doors::input::read(&path, latlab_doors::Reached::Named, MAX_OBJECT_BYTES).ok();
        let functions = bytes.as_deref().map(functions_of).unwrap_or_default();
        LoadedObject {
            library,
            bias,
            ranges,
            functions,
            bytes,
            lines: None,
        }
    }

    fn read_lines(&self, path: &str) -> Option<addr2line::Loader> {
        let file = object::File::parse(self.bytes.as_deref()?).ok()?;
        file.section_by_name(".debug_line")?;
        addr2line::Loader::new(path).ok()
    }

    /// The function that covers a file address.
    pub fn function_at(&self, address: u64) -> Option<&Function> {
        let after = self.functions.partition_point(|f| f.address <= address);
        let function = self.functions.get(after.checked_sub(1)?)?;
        (address < function.address + function.size).then_some(function)
    }

    /// The function that starts at a file address (a call's target).
    pub fn function_starting_at(&self, address: u64) -> Option<&Function> {
        self.function_at(address)
            .filter(|function| function.address == address)
    }

    /// `dir/file.rs:line` of the source a file address came from (the innermost inlined
    /// frame), where the object has line tables.
    pub fn line_at(&self, address: u64) -> Option<String> {
        let location = self.lines.as_ref()?.find_location(address).ok()??;
        let file = location.file?;
        let mut last_two: Vec<&str> = file.rsplit('/').take(2).collect();
        last_two.reverse();
        let shown = last_two.join("/");
        Some(match location.line {
            Some(line) => format!("{shown}:{line}"),
            None => shown,
        })
    }

    /// The bytes of a function, from the section that holds it.
    pub fn code_of(&self, function: &Function) -> Option<Vec<u8>> {
        let file = object::File::parse(self.bytes.as_deref()?).ok()?;
        let section = file.sections().find(|s| {
            s.address() <= function.address
                && function.address + function.size <= s.address() + s.size()
        })?;
        let data = section.data_range(function.address, function.size).ok()??;
        Some(data.to_vec())
    }
}

/// The functions of an object file's symbol tables (static and dynamic), demangled.
fn functions_of(bytes: &[u8]) -> Vec<Function> {
    let Ok(file) = object::File::parse(bytes) else {
        return Vec::new();
    };
    let mut functions: Vec<Function> = (file.symbols().chain(file.dynamic_symbols()))
        .filter(|s| s.kind() == SymbolKind::Text && s.is_definition() && s.size() > 0)
        .filter_map(|s| {
            Some(Function {
                address: s.address(),
                size: s.size(),
                name: format!("{:#}", rustc_demangle::demangle(s.name().ok()?)),
            })
        })
        .collect();
    functions.sort_by_key(|f| f.address);
    functions.dedup_by_key(|f| f.address);
    functions
}

/// A loaded object's path, load bias and loaded run-time ranges.
type Segments = (PathBuf, u64, Vec<(u64, u64)>);

/// Each loaded object's segments, the executable first: `dl_iterate_phdr` reports the main
/// program first, with an empty name.
fn loaded_segments() -> Vec<Segments> {
    type Found = Vec<Segments>;
    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: the loader passes a valid info whose program headers and name live for
        // the call; `data` is the vector handed to dl_iterate_phdr below.
        unsafe {
            let info = &*info;
            let found = &mut *(data as *mut Found);
            let name = if info.dlpi_name.is_null() {
                ""
            } else {
                CStr::from_ptr(info.dlpi_name).to_str().unwrap_or("")
            };
            let path = if found.is_empty() {
                PathBuf::from("/proc/self/exe")
            } else {
                Path::new(name).to_path_buf()
            };
            let headers = std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize);
            let ranges = headers
                .iter()
                .filter(|h| h.p_type == libc::PT_LOAD)
                .map(|h| {
                    let start = info.dlpi_addr + h.p_vaddr;
                    (start, start + h.p_memsz)
                })
                .collect();
            found.push((path, info.dlpi_addr, ranges));
        }
        0
    }
    let mut found: Found = Vec::new();
    // SAFETY: `each` only pushes onto the vector that `found` is.
    unsafe { libc::dl_iterate_phdr(Some(each), (&raw mut found).cast()) };
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A function of this test binary whose run-time address the tests look up.
    #[inline(never)]
    fn marker_function(x: u64) -> u64 {
        std::hint::black_box(x).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    #[test]
    fn a_run_time_address_is_named_by_its_function_and_source_line() {
        let process = Process::read().expect("this test binary can be read");
        let runtime = marker_function as *const () as usize as u64;
        let located = process
            .locate(runtime)
            .expect("the address is in a loaded object");
        assert_eq!(located.object, 0, "in the executable");
        let function = located.function.expect("covered by a symbol");
        assert!(
            function.name.ends_with("marker_function"),
            "{}",
            function.name
        );
        assert_eq!(function.address, located.address);
        // Test builds keep line tables: some of its instructions come from this file (others
        // from what was inlined into it, such as black_box).
        let lines: Vec<String> = (function.address..function.address + function.size)
            .filter_map(|address| process.object(0).line_at(address))
            .collect();
        assert!(
            lines.iter().any(|l| l.starts_with("profile/binary.rs:")),
            "{lines:?}"
        );
        // An address in a shared library is placed in it.
        let libc_function = libc::getpid as *const () as usize as u64;
        let in_libc = process.locate(libc_function).expect("libc is loaded");
        assert_ne!(in_libc.object, 0);
        assert!(process.object(in_libc.object).library.starts_with("libc"));
    }

    #[test]
    fn a_function_is_read_back_and_decoded_to_its_return() {
        let process = Process::read().unwrap();
        let located = process
            .locate(marker_function as *const () as usize as u64)
            .unwrap();
        let function = located.function.unwrap();
        let code = process.object(0).code_of(function).expect("its bytes");
        assert_eq!(code.len() as u64, function.size);
        #[cfg(target_arch = "x86_64")]
        {
            let listing =
                super::super::disassembly::disassemble(process.object(0), &code, function.address)
                    .unwrap();
            assert_eq!(listing[0].0, function.address);
            assert!(
                listing.iter().any(|(_, text)| text.contains("imul")),
                "{listing:?}"
            );
            assert!(listing.iter().any(|(_, text)| text == "ret"), "{listing:?}");
        }
    }
}
