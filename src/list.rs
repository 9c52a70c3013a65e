//! `latlab list`: every probe with its one-line method, how its time becomes figures, and
//! the names of its results (`{placeholder}` for a size, a CPU, a level), from the registry;
//! `--json` gives the same as an array for tools, each result name with the regular
//! expression of the names it stands for; `--markdown` the book's page of probes and options.

use crate::cli::ListArgs;
use latlab_engine::result_names::template_regex;
use latlab_report::{ExportError, OutputTarget, write_output};

pub fn print(args: &ListArgs) -> Result<(), ExportError> {
    let probes = latlab_probes::PROBES;
    let text = if args.markdown {
        crate::probes_page::page()
    } else if args.json {
        let listed: Vec<serde_json::Value> = probes
            .iter()
            .map(|p| {
                let results: Vec<serde_json::Value> = p
                    .results
                    .iter()
                    .map(|&template| {
                        serde_json::json!({
                            "name": template,
                            "regex": template_regex(template).ok(),
                        })
                    })
                    .collect();
                serde_json::json!({
                    "id": p.id,
                    "method": p.method,
                    "timing": p.timing_text(),
                    "options": p.options().iter().map(|o| o.name).collect::<Vec<_>>(),
                    "results": results,
                })
            })
            .collect();
        let mut text = serde_json::to_string_pretty(&listed).map_err(|e| ExportError::Encode {
            format: "JSON",
            detail: e.to_string(),
        })?;
        text.push('\n');
        text
    } else {
        let width = probes.iter().map(|p| p.id.len()).max().unwrap_or(0);
        let mut text = String::new();
        for probe in probes {
            text.push_str(&format!("{:width$}  {}\n", probe.id, probe.method));
            text.push_str(&format!("{:width$}  timing: {}\n", "", probe.timing_text()));
            if !probe.options().is_empty() {
                let options: Vec<String> = (probe.options().iter())
                    .map(|option| format!("--{}", option.name))
                    .collect();
                let options = options.join(", ");
                text.push_str(&format!("{:width$}  options: {options}\n", ""));
            }
            text.push_str(&format!(
                "{:width$}  results: {}\n",
                "",
                probe.results.join(", ")
            ));
        }
        text
    };
    write_output(&OutputTarget::Stdout, &text)
}
