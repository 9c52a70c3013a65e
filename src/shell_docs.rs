//! Shell completions and man pages, generated from the command-line definition itself
//! (clap_complete, clap_mangen), so they never disagree with `--help`.

use crate::cli::{Cli, CompletionsArgs, ManArgs};
use clap::CommandFactory;
use latlab_report::{OutputTarget, write_output};

/// Prints the completion script for the shell asked.
pub fn completions(args: &CompletionsArgs) -> anyhow::Result<()> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "latlab", &mut script);
    write_output(&OutputTarget::Stdout, &String::from_utf8(script)?)?;
    Ok(())
}

/// Prints latlab.1, or writes every page into `--dir`.
pub fn man(args: &ManArgs) -> anyhow::Result<()> {
    let mut pages = man_pages(Cli::command())?;
    match &args.dir {
        None => {
            let (_, page) = pages.pop().expect("latlab.1 comes last");
            write_output(&OutputTarget::Stdout, &page)?;
        }
        Some(dir) => {
            // Each page is renamed into place: a link planted under a page's name is
            // replaced, never written through.
            for (name, page) in &pages {
                write_output(&OutputTarget::Replaced(dir.join(name)), page)?;
            }
            write_output(
                &OutputTarget::Stdout,
                &format!("man pages: {}\n", dir.display()),
            )?;
        }
    }
    Ok(())
}

/// Every page clap_mangen's `generate_to` would write, by file name: the subcommands' pages
/// (those not hidden), then latlab.1 last.
fn man_pages(command: clap::Command) -> anyhow::Result<Vec<(String, String)>> {
    fn add(command: clap::Command, pages: &mut Vec<(String, String)>) -> anyhow::Result<()> {
        for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
            add(sub.clone(), pages)?;
        }
        let man = clap_mangen::Man::new(command);
        let mut page = Vec::new();
        man.render(&mut page)?;
        pages.push((man.get_filename(), String::from_utf8(page)?));
        Ok(())
    }
    let mut command = command.disable_help_subcommand(true);
    command.build();
    let mut pages = Vec::new();
    add(command, &mut pages)?;
    Ok(pages)
}
