//! `latlab list`: every probe with its one-line method and how its time becomes figures,
//! from the registry.

use std::io::Write;

pub fn print() -> std::io::Result<()> {
    let probes = latlab_probes::PROBES;
    let width = probes.iter().map(|p| p.id.len()).max().unwrap_or(0);
    let mut out = std::io::stdout().lock();
    for probe in probes {
        writeln!(out, "{:width$}  {}", probe.id, probe.method)?;
        writeln!(out, "{:width$}  timing: {}", "", probe.timing)?;
    }
    Ok(())
}
