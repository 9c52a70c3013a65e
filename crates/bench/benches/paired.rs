//! The paired comparison held to its claims: five bodies of different kinds, and the
//! attempts that say how often `--against` hears a change of 1% in them, and how often it
//! calls two builds of one commit the same.
//!
//! `cargo bench -p latlab-bench --bench paired` measures the bodies as any benchmark;
//! `cargo bench -p latlab-bench --bench paired -- --attempts 10 [BODY]…` makes the attempts: per
//! body, ten comparisons with 1% more work planted in this build (`LATLAB_PAIRED_PLANT`,
//! each body's loop a hundredth longer), and twice as many with nothing planted, each a
//! `--against` run of this executable against itself, its other side started through a
//! script that clears the plant. It prints, per body, how often the planted change was
//! called slower and in what time, how often the unchanged one was called the same, what
//! each could hear, and the layout floor.

// A benchmark reads and writes files as it pleases: the doors are for what latlab does.
#![allow(clippy::disallowed_methods)]
use latlab_bench::black_box;
use std::sync::LazyLock;

/// The variable that plants 1% more work in every body of this process.
const PLANT: &str = "LATLAB_PAIRED_PLANT";

/// How many turns each body's loop takes: a hundredth more where the plant is set.
fn turns(base: usize) -> usize {
    static PLANTED: LazyLock<bool> = LazyLock::new(|| std::env::var_os(PLANT).is_some());
    if *PLANTED { base + base / 100 } else { base }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == "--attempts") {
        Some(i) => {
            let attempts = (args.get(i + 1).and_then(|n| n.parse().ok())).unwrap_or(10);
            let bodies: Vec<&str> = (args.iter().skip(i + 2))
                .map(String::as_str)
                .filter(|a| !a.starts_with("--"))
                .collect();
            std::process::exit(attempt(attempts, &bodies));
        }
        None => latlab_bench::main(),
    }
}

/// A dependent chain of multiplies and shifts: the core's arithmetic, nothing else.
#[latlab_bench::bench]
fn compute() -> u64 {
    let mut x = black_box(0x9e37_79b9_7f4a_7c15u64);
    for _ in 0..turns(4000) {
        x = (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    }
    x
}

/// Branches on random bits: a predictor that cannot learn them.
#[latlab_bench::bench]
fn branchy() -> u64 {
    static BITS: LazyLock<Vec<u8>> = LazyLock::new(|| random_bytes(1 << 16));
    let (bits, mut sum) = (&*BITS, 0u64);
    for (i, &b) in bits.iter().take(turns(4000)).enumerate() {
        if b & 1 == 1 {
            sum = sum.wrapping_add(i as u64);
        } else {
            sum ^= i as u64;
        }
    }
    sum
}

/// A pointer chase over 8 MiB in a random cycle: each step a load the last one named, past
/// the L2 of any core of today.
#[latlab_bench::bench]
fn chase() -> usize {
    static NEXT: LazyLock<Vec<usize>> = LazyLock::new(|| random_cycle((8 << 20) / 8));
    let next = &*NEXT;
    let mut at = black_box(0);
    for _ in 0..turns(600) {
        at = next[at];
    }
    at
}

/// Vectors of 16 to 1,024 bytes allocated, touched and freed.
#[latlab_bench::bench]
fn allocate() -> usize {
    let mut total = 0;
    for i in 0..turns(200) {
        let v = black_box(vec![i as u8; 16 + (i * 37) % 1009]);
        total += v.len();
    }
    total
}

/// `getppid`, a system call that does almost nothing in the kernel.
#[cfg(unix)]
#[latlab_bench::bench]
fn syscall() -> i32 {
    let mut sum = 0;
    for _ in 0..turns(100) {
        // SAFETY: getppid takes nothing and cannot fail.
        sum ^= unsafe { libc::getppid() };
    }
    sum
}

fn random_bytes(n: usize) -> Vec<u8> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 32) as u8
        })
        .collect()
}

/// A single cycle through `n` slots in a random order: `next[i]` is the slot after `i`.
fn random_cycle(n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for i in (1..n).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        order.swap(i, (state % (i as u64 + 1)) as usize);
    }
    let mut next = vec![0; n];
    for w in 0..n {
        next[order[w]] = order[(w + 1) % n];
    }
    next
}

/// The attempts need a shell script for the other side.
#[cfg(not(unix))]
fn attempt(_n: usize, _bodies: &[&str]) -> i32 {
    eprintln!("error: --attempts starts the other side through a shell script: run it on Unix");
    2
}

#[cfg(unix)]
use attempts::attempt;

/// The attempts: `--against` runs of this executable, each read back from its JSON.
#[cfg(unix)]
mod attempts {
    use super::PLANT;
    use std::path::Path;
    use std::process::Command;

    /// What one `--against` attempt said of a body: its verdict, the seconds it took, what it
    /// could hear and the layout floor.
    struct Said {
        verdict: String,
        seconds: f64,
        could_hear: Option<f64>,
        floor: Option<f64>,
    }

    /// One `--against` run of `body` in `dir`, planted or not; `None` where it failed.
    fn compare(exe: &Path, other: &Path, dir: &Path, body: &str, planted: bool) -> Option<Said> {
        let json = dir.join("paired.json");
        let mut command = Command::new(exe);
        command
            .args(["--bench", "--exact", body, "--against"])
            .arg(other)
            .arg("--json")
            .arg(&json)
            .env_remove(PLANT);
        if planted {
            command.env(PLANT, "1");
        }
        let output = command.output().ok()?;
        if !output.status.success() {
            eprintln!("{body}: {}", String::from_utf8_lossy(&output.stderr).trim());
            return None;
        }
        let value: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).ok()?).ok()?;
        let b = &value["benchmarks"][0];
        Some(Said {
            verdict: b["verdict"].as_str()?.to_string(),
            seconds: b["seconds"].as_f64()?,
            could_hear: b["would_have_caught"].as_f64(),
            floor: b["layout_floor"].as_f64(),
        })
    }

    fn median(mut values: Vec<f64>) -> f64 {
        values.sort_by(f64::total_cmp);
        values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
    }

    /// The attempts, `n` planted and `2n` unchanged a body (of `bodies`, or all); the exit
    /// status.
    pub fn attempt(n: usize, bodies: &[&str]) -> i32 {
        let exe = std::env::current_exe().expect("this executable");
        let dir = tempfile::tempdir().expect("a temporary directory");
        // The other side: this executable with the plant cleared.
        let other = dir.path().join("unplanted");
        let script = format!(
            "#!/bin/sh\nunset {PLANT}\nexec '{}' \"$@\"\n",
            exe.display()
        );
        std::fs::write(&other, script).expect("the other side's script");
        let executable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
        std::fs::set_permissions(&other, executable).expect("the script made executable");
        println!(
            "{n} comparisons with 1% more work planted in this build, {} with nothing planted, a \
             body; each up to 2 s",
            2 * n
        );
        let all = ["compute", "branchy", "chase", "allocate", "syscall"];
        for body in all
            .into_iter()
            .filter(|b| bodies.is_empty() || bodies.contains(b))
        {
            let planted: Vec<Said> = (0..n)
                .filter_map(|_| compare(&exe, &other, dir.path(), body, true))
                .collect();
            let unchanged: Vec<Said> = (0..2 * n)
                .filter_map(|_| compare(&exe, &other, dir.path(), body, false))
                .collect();
            let called =
                |said: &[Said], word: &str| said.iter().filter(|s| s.verdict == word).count();
            let heard = |said: &[Said]| median(said.iter().filter_map(|s| s.could_hear).collect());
            let floor = |said: &[Said]| median(said.iter().filter_map(|s| s.floor).collect());
            println!(
                "{body}: 1% planted called slower in {} of {} (median {:.1} s; could hear ±{:.2}%); \
                 unchanged called the same in {} of {} (could hear ±{:.2}%); layout floor ±{:.2}% \
                 at the median",
                called(&planted, "slower"),
                planted.len(),
                median(planted.iter().map(|s| s.seconds).collect()),
                100.0 * heard(&planted),
                called(&unchanged, "same"),
                unchanged.len(),
                100.0 * heard(&unchanged),
                100.0 * floor(&unchanged),
            );
        }
        0
    }
}
