//! `latlab list`: every probe with its one-line method and how its time becomes figures,
//! from the registry.

use latlab_report::{ExportError, OutputTarget, write_output};

pub fn print() -> Result<(), ExportError> {
    let probes = latlab_probes::PROBES;
    let width = probes.iter().map(|p| p.id.len()).max().unwrap_or(0);
    let mut text = String::new();
    for probe in probes {
        text.push_str(&format!("{:width$}  {}\n", probe.id, probe.method));
        text.push_str(&format!("{:width$}  timing: {}\n", "", probe.timing));
    }
    write_output(&OutputTarget::Stdout, &text)
}
