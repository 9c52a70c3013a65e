//! `latlab env`: the environment every run records, on its own, as text or JSON.

use crate::cli::EnvArgs;
use crate::plan::host;
use latlab_engine::ClockInfo;
use latlab_engine::environment::Environment;
use latlab_report::units::{format_clock, format_ns};
use latlab_report::{OutputTarget, advice, printable, write_output};
use serde_json::json;

pub fn print(args: &EnvArgs) -> anyhow::Result<()> {
    let host = host(args.synthetic);
    let (mut environment, clock) = (host.environment(), host.timer().info().clone());
    environment.perf_counters = Some(host.perf_counters());
    let shown = if args.json {
        let document = json!({ "environment": environment, "clock": clock });
        format!("{}\n", serde_json::to_string_pretty(&document)?)
    } else {
        printable(&text(&environment, &clock)).into_owned()
    };
    write_output(&OutputTarget::Stdout, &shown)?;
    Ok(())
}

fn text(env: &Environment, clock: &ClockInfo) -> String {
    let lines: Vec<(&str, String)> = (machine_lines(env).into_iter())
        .chain(system_lines(env, clock))
        .collect();
    let width = lines.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let mut text: String = lines
        .iter()
        .map(|(key, value)| format!("{key:width$}  {value}\n"))
        .collect();
    let concerns = env.concerns();
    let notes = concerns.iter().map(advice::concern);
    for note in notes.chain(advice::clock(clock)) {
        text.push_str(&format!("note: {note}\n"));
    }
    text
}

/// The machine's lines of `latlab env`: host, CPU, cores, caches, frequency, core classes.
fn machine_lines(env: &Environment) -> Vec<(&'static str, String)> {
    let unknown = || "unknown".to_string();
    let caches: Vec<String> = env
        .caches
        .iter()
        .map(|c| {
            format!(
                "L{} {} {} KiB (shared by {})",
                c.level,
                c.kind.to_lowercase(),
                c.size_bytes / 1024,
                c.shared_by_cpus
            )
        })
        .collect();
    vec![
        ("host", env.host_name.clone()),
        ("cpu", env.cpu.model.clone()),
        (
            "microcode",
            env.cpu.microcode.clone().unwrap_or_else(unknown),
        ),
        (
            "cores",
            format!(
                "{} logical, {} physical, SMT {}",
                env.cpu.logical_cpus,
                env.cpu
                    .physical_cores
                    .map_or_else(unknown, |c| c.to_string()),
                env.cpu
                    .smt_active
                    .map_or_else(unknown, |s| if s { "on" } else { "off" }.into())
            ),
        ),
        (
            "caches",
            if caches.is_empty() {
                unknown()
            } else {
                caches.join(", ")
            },
        ),
        (
            "frequency",
            format!(
                "{} MHz now, governor {}",
                env.cpu.mhz.map_or_else(unknown, |m| format!("{m:.0}")),
                env.cpu
                    .governor
                    .clone()
                    .unwrap_or_else(|| "none (no cpufreq)".into())
            ),
        ),
        (
            "core classes",
            latlab_engine::environment::describe_core_classes(&env.core_classes),
        ),
        (
            "memory nodes",
            latlab_engine::environment::describe_memory_nodes(&env.memory_nodes),
        ),
    ]
}

/// The system's lines of `latlab env`: virtualisation, kernel, clocks, privileges,
/// counters, load and build.
fn system_lines(env: &Environment, clock: &ClockInfo) -> Vec<(&'static str, String)> {
    let unknown = || "unknown".to_string();
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let limit = |l: Option<u64>| l.map_or_else(|| "unlimited".to_string(), |v| v.to_string());
    let perf = env.perf_counters.as_ref().map_or_else(
        || "not probed".to_string(),
        |perf| {
            format!(
                "hardware {}, software {}, perf_event_paranoid {}{}",
                yes_no(perf.hardware),
                yes_no(perf.software),
                perf.paranoid.map_or_else(unknown, |p| p.to_string()),
                perf.hardware_error
                    .as_ref()
                    .map_or_else(String::new, |e| format!(" (hardware: {e})"))
            )
        },
    );
    vec![
        (
            "virtualisation",
            env.virtualization
                .clone()
                .unwrap_or_else(|| "none detected".into()),
        ),
        ("kernel", format!("{} {}", env.os, env.kernel)),
        (
            "clocksource",
            env.clocksource.clone().unwrap_or_else(unknown),
        ),
        (
            "transparent huge pages",
            env.transparent_hugepages.clone().unwrap_or_else(unknown),
        ),
        (
            "clock",
            format!(
                "{}: {}; resolution {}, timed-region overhead {}{}",
                format_clock(clock),
                clock.method,
                format_ns(clock.resolution_ns),
                format_ns(clock.region_overhead_ns),
                clock
                    .fallback_reason
                    .as_ref()
                    .map_or_else(String::new, |r| format!(" (fallback: {r})"))
            ),
        ),
        (
            "privileges",
            format!(
                "euid {}, RLIMIT_RTPRIO {}, RLIMIT_MEMLOCK {}, CAP_SYS_NICE {}, CAP_IPC_LOCK {}",
                env.privileges.euid,
                limit(env.privileges.rtprio_limit),
                limit(env.privileges.memlock_limit_bytes),
                yes_no(env.privileges.cap_sys_nice),
                yes_no(env.privileges.cap_ipc_lock)
            ),
        ),
        ("perf counters", perf),
        (
            "load average",
            env.load_avg
                .map_or_else(unknown, |l| format!("{:.2} {:.2} {:.2}", l[0], l[1], l[2])),
        ),
        (
            "build",
            format!(
                "{} (opt-level {}), latlab {}",
                env.build_profile, env.opt_level, env.latlab_version
            ),
        ),
    ]
}
