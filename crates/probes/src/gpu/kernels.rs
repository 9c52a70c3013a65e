//! The family's PTX modules and the kernels each holds. The text is compiled by the driver
//! for the GPU at hand; a test assembles each module with `ptxas` where it is installed.

/// The empty kernel (`gpu.launch`).
pub(crate) const EMPTY: &str = include_str!("kernels/empty.ptx");
/// The device pointer chases (`gpu.memory`, `gpu.spread`).
pub(crate) const CHASE: &str = include_str!("kernels/chase.ptx");
/// The shared-memory chase (`gpu.shared`).
pub(crate) const SHARED: &str = include_str!("kernels/shared.ptx");
/// The atomic adds (`gpu.atomic`).
pub(crate) const ATOMIC: &str = include_str!("kernels/atomic.ptx");

/// Every module with the kernels the probes look up in it.
#[cfg(test)]
const MODULES: &[(&str, &str, &[&str])] = &[
    ("empty.ptx", EMPTY, &["empty"]),
    (
        "chase.ptx",
        CHASE,
        &["chase_ca", "chase_cg", "chase_cg_on_sm"],
    ),
    ("shared.ptx", SHARED, &["shared_chase"]),
    ("atomic.ptx", ATOMIC, &["atomic_add"]),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kernel a probe looks up is an entry of its module, and each module declares the
    /// oldest target latlab supports, so the driver of any GPU since Volta compiles it.
    #[test]
    fn every_kernel_is_an_entry_of_its_module() {
        for (file, text, kernels) in MODULES {
            assert!(text.contains(".target sm_70"), "{file}");
            assert!(text.contains(".address_size 64"), "{file}");
            for kernel in *kernels {
                assert!(
                    text.contains(&format!(".visible .entry {kernel}(")),
                    "{file} lacks {kernel}"
                );
            }
        }
    }

    /// Assembles every module for Volta and Hopper with NVIDIA's `ptxas` (from
    /// `LATLAB_PTXAS`, else `ptxas` on the PATH): a kernel the driver would refuse fails
    /// here, on a machine without a GPU. In the ignored tier, which `.ci/run` runs after
    /// installing `ptxas`; fails where there is none.
    #[test]
    #[ignore = "needs NVIDIA's ptxas (LATLAB_PTXAS, or ptxas on the PATH)"]
    fn every_module_assembles_with_ptxas() {
        let ptxas = std::env::var_os("LATLAB_PTXAS").unwrap_or_else(|| "ptxas".into());
        let probe = std::process::Command::new(&ptxas).arg("--version").output();
        assert!(
            probe.is_ok(),
            "{ptxas:?} cannot run: install NVIDIA's ptxas and set LATLAB_PTXAS to it"
        );
        let dir = tempfile::tempdir().unwrap();
        for (file, text, _) in MODULES {
            let source = dir.path().join(file);
            std::fs::write(&source, text).unwrap();
            for arch in ["sm_70", "sm_90"] {
                let output = std::process::Command::new(&ptxas)
                    .arg(format!("-arch={arch}"))
                    .arg(&source)
                    .arg("-o")
                    .arg(dir.path().join(format!("{file}.{arch}.cubin")))
                    .output()
                    .unwrap();
                assert!(
                    output.status.success(),
                    "{file} for {arch}: {}",
                    String::from_utf8_lossy(&output.stderr)
                );
            }
        }
    }
}
