//! `deploy/slurm/latlab.sbatch` on a real Slurm cluster of one machine: the test writes a
//! minimal slurm.conf with two nodes on this host (Debian's Slurm runs several slurmd on one
//! host), starts munged (if it is not running), slurmctld and two slurmd, submits the batch
//! script for both nodes with `sbatch`, waits for the job, and reads the two runs back with
//! `latlab fleet`. It needs root and Debian's slurm-wlm and munge packages, so it is in the
//! ignored tier (`.ci/run` installs them and runs it); without them it fails and says why.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Daemons this test started, killed when it ends however it ends.
struct Daemons {
    children: Vec<Child>,
    munged_pid_file: Option<&'static str>,
}

impl Drop for Daemons {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(pid_file) = self.munged_pid_file
            && let Ok(pid) = std::fs::read_to_string(pid_file)
            && let Ok(pid) = pid.trim().parse::<i32>()
        {
            // SAFETY: kill(2) on the munged this test started.
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
    }
}

fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn munge_works() -> bool {
    Command::new("sh")
        .args(["-c", "munge -n | unmunge"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Waits until `check` holds, or fails with `what` after `limit`.
fn wait_for(what: &str, limit: Duration, mut check: impl FnMut() -> bool) {
    let started = Instant::now();
    while !check() {
        assert!(started.elapsed() < limit, "{what} within {limit:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn slurm_conf(dir: &Path, host: &str, cpus: usize) -> String {
    let d = dir.display();
    format!(
        "ClusterName=latlabci
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort=26817
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool/%n
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd-%n.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
NodeName=ci1 NodeHostname={host} NodeAddr=127.0.0.1 Port=26818 CPUs={cpus} State=UNKNOWN
NodeName=ci2 NodeHostname={host} NodeAddr=127.0.0.1 Port=26819 CPUs={cpus} State=UNKNOWN
PartitionName=ci Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"
    )
}

fn output(command: &mut Command) -> String {
    let out = command.output().expect("the Slurm command runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[ignore = "needs root and Debian's slurm-wlm and munge"]
fn the_batch_script_runs_latlab_once_per_node_and_the_fleet_reads_them() {
    let _alone = crate::machine_alone();
    // SAFETY: geteuid(2) has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let missing: Vec<&str> = ["slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "munged"]
        .into_iter()
        .filter(|p| !have(p))
        .collect();
    assert!(
        root && missing.is_empty(),
        "the Slurm test needs root and Debian's slurm-wlm and munge (missing: {missing:?}, \
         root: {root}); .ci/run installs them"
    );
    let dir = tempfile::tempdir().unwrap();
    let (daemons, conf) = a_cluster_of_two_nodes(dir.path());
    let results = the_job_run_on_both_nodes(dir.path(), &conf);
    the_fleet_reads_both(&results);
    drop(daemons);
}

/// A Slurm program run with the cluster's configuration `conf`.
fn slurm(program: &str, conf: &Path) -> Command {
    let mut command = Command::new(program);
    command.env("SLURM_CONF", conf);
    command
}

/// A cluster in `dir` of two nodes on this machine, both idle: its daemons (stopped when
/// dropped) and its configuration.
fn a_cluster_of_two_nodes(dir: &Path) -> (Daemons, std::path::PathBuf) {
    for sub in ["state", "spool", "submit"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    let host = output(Command::new("hostname").arg("-s"))
        .trim()
        .to_string();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let conf = dir.join("slurm.conf");
    std::fs::write(&conf, slurm_conf(dir, &host, cpus)).unwrap();

    let mut daemons = Daemons {
        children: Vec::new(),
        munged_pid_file: None,
    };
    if !munge_works() {
        std::fs::create_dir_all("/run/munge").unwrap();
        let status = Command::new("sh")
            .args([
                "-c",
                "chown munge:munge /run/munge && runuser -u munge -- munged",
            ])
            .status()
            .unwrap();
        assert!(status.success(), "munged starts");
        daemons.munged_pid_file = Some("/run/munge/munged.pid");
        wait_for("munge to answer", Duration::from_secs(10), munge_works);
    }
    let spawn = |program: &str, args: &[&str]| {
        Command::new(program)
            .args(args)
            .env("SLURM_CONF", &conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{program}: {e}"))
    };
    let conf_text = conf.to_str().unwrap();
    daemons
        .children
        .push(spawn("slurmctld", &["-D", "-c", "-f", conf_text]));
    for node in ["ci1", "ci2"] {
        daemons
            .children
            .push(spawn("slurmd", &["-D", "-N", node, "-f", conf_text]));
    }
    wait_for("both nodes idle", Duration::from_secs(60), || {
        output(slurm("sinfo", &conf).args(["-h", "-N", "-o", "%N %t"]))
            .lines()
            .filter(|l| l.ends_with(" idle"))
            .count()
            == 2
    });
    (daemons, conf)
}

/// The batch script submitted to both nodes and waited for: the directory of its results.
fn the_job_run_on_both_nodes(dir: &Path, conf: &Path) -> std::path::PathBuf {
    let results = dir.join("fleet");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/slurm/latlab.sbatch");
    let submitted = slurm("sbatch", conf)
        .current_dir(dir.join("submit"))
        .env("LATLAB", assert_cmd::cargo::cargo_bin("latlab"))
        .env("LATLAB_RESULTS", &results)
        .args(["--parsable", "--nodes=2"])
        .arg(&script)
        .args(["--synthetic", "--only", "syscall"])
        .output()
        .unwrap();
    assert!(
        submitted.status.success(),
        "sbatch: {}",
        String::from_utf8_lossy(&submitted.stderr)
    );
    let job = String::from_utf8_lossy(&submitted.stdout)
        .trim()
        .to_string();
    wait_for("the job to end", Duration::from_secs(120), || {
        output(slurm("squeue", conf).args(["-h", "-j", &job]))
            .trim()
            .is_empty()
    });
    let log =
        std::fs::read_to_string(dir.join(format!("submit/latlab-{job}.out"))).unwrap_or_default();
    let mut runs: Vec<String> = std::fs::read_dir(&results)
        .unwrap_or_else(|e| panic!("no results directory ({e}); the job said:\n{log}"))
        .flatten()
        .filter(|e| e.path().join("results.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    runs.sort();
    assert_eq!(runs.len(), 2, "{runs:?}; the job said:\n{log}");
    assert!(
        runs[0].starts_with("ci1-") && runs[1].starts_with("ci2-"),
        "{runs:?}"
    );
    assert!(
        runs.iter().all(|r| r.ends_with(&format!("-j{job}"))),
        "{runs:?}"
    );
    results
}

fn the_fleet_reads_both(results: &Path) {
    let fleet = Command::new(assert_cmd::cargo::cargo_bin("latlab"))
        .arg("fleet")
        .arg(results)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&fleet.stdout);
    assert!(fleet.status.success(), "{text}");
    // Both nodes' runs are read. Both are of the synthetic machine, the same everywhere (one
    // host name, one start time, one figure), so the fleet counts them as one run, and says
    // so: it cannot tell them from a copy.
    assert!(text.contains("· 1 host ·"), "{text}");
    assert!(
        text.contains("1 file repeats a run already read (the same host, start time and figures)"),
        "{text}"
    );
    assert!(text.contains("\nSystem call "), "{text}");
}
