//! Shell completions and man pages, generated from the command-line definition itself
//! (clap_complete, clap_mangen), so they never disagree with `--help`.

use crate::cli::{Cli, CompletionsArgs, ManArgs};
use anyhow::Context;
use clap::CommandFactory;
use std::io::Write;

/// Prints the completion script for the shell asked.
pub fn completions(args: &CompletionsArgs) -> anyhow::Result<()> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "latlab", &mut script);
    std::io::stdout().write_all(&script)?;
    Ok(())
}

/// Prints latlab.1, or writes every page into `--dir`.
pub fn man(args: &ManArgs) -> anyhow::Result<()> {
    let command = Cli::command();
    match &args.dir {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(command).render(&mut page)?;
            std::io::stdout().write_all(&page)?;
        }
        Some(dir) => {
            clap_mangen::generate_to(command, dir)
                .with_context(|| format!("could not write the man pages into {}", dir.display()))?;
            println!("man pages: {}", dir.display());
        }
    }
    Ok(())
}
