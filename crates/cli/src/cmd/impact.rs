use anyhow::Result;
use protocol::{Impact, ImpactRequest, ImpactRisk as Risk, ResolvedKind as TargetKind};

use super::{
    Ctx, analysis,
    session::{open_session, with_call},
};
use crate::output::{Output, wrap};

pub const AFTER_HELP: &str = "\
Examples:
  ironbees impact src/shop/cart.py            what depends on cart.py, tests to run
  ironbees impact Cart.total --json           the same for one method
  ironbees impact 'src/shop/cart.py:42'       the definition at line 42

A file's impact is the reverse closure of the dependency graph (imports and
references resolved without guessing); a definition's is the reverse closure of
references to it. The radius counts dependent files by distance; risk is high from a
fifth of the project or 20 direct dependents, medium from a twentieth or 5. Tests
are test files (each language's conventions) that reach the target, or that are
named after it, by priority.";

#[derive(Debug, clap::Args)]
pub struct ImpactArgs {
    /// A file, directory, `path:line`, `path::name` or (qualified) name.
    pub target: String,
    /// List dependents up to this distance (the radius counts all).
    #[arg(long, value_name = "N")]
    pub depth: Option<u32>,
    /// List at most N dependents.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub limit: usize,
    /// Take every definition a name matches instead of refusing an ambiguous name.
    #[arg(long)]
    pub all: bool,
}

pub fn run(ctx: &Ctx, out: &Output, args: &ImpactArgs) -> Result<i32> {
    let req = ImpactRequest {
        target: analysis::target_spec(ctx, &args.target),
        depth: args.depth,
        limit: Some(args.limit as u32),
        all: args.all,
    };
    let session = open_session(ctx, out, false)?;
    let result = with_call(ctx, out, |call| session.impact(&req, call))?;
    if out.json {
        out.json(&result)?;
        return Ok(0);
    }
    print(out, &result);
    Ok(0)
}

fn print(out: &Output, i: &Impact) {
    let bold = out.style_out().bold();
    let dim = out.style_out().dim();
    let what = match i.target.kind {
        TargetKind::File => "file".to_owned(),
        TargetKind::Directory => format!("directory, {} files", i.target.files.len()),
        TargetKind::Symbol => {
            let s: Vec<String> = i
                .target
                .symbols
                .iter()
                .map(|s| format!("{} {} at {}:{}", s.kind, s.qualified_name, s.path, s.line))
                .collect();
            s.join("; ")
        }
    };
    out.line(format!("impact of {} ({what})", bold.apply_to(&i.target.spec)));
    let r = &i.radius;
    let risk = match r.risk {
        Risk::High => out.style_out().red().bold().apply_to("high"),
        Risk::Medium => out.style_out().yellow().bold().apply_to("medium"),
        Risk::Low => out.style_out().green().apply_to("low"),
    };
    out.line(format!(
        "risk {risk}: {} dependent files ({} direct, {} within 2, {} within 3), {:.1}% of the project, weighted {:.2}",
        r.total,
        r.direct,
        r.within_2,
        r.within_3,
        r.share * 100.0,
        r.weighted
    ));
    if !i.symbols.is_empty() {
        out.line(bold.apply_to("referenced by").to_string());
        for s in &i.symbols {
            out.line(format!(
                "  {:>2}  {}:{} {}  {}",
                s.distance,
                s.path,
                s.line,
                s.qualified_name.as_deref().unwrap_or("<top level>"),
                dim.apply_to(format!("→ {}", s.via))
            ));
        }
    } else if !i.dependents.is_empty() {
        out.line(bold.apply_to("dependents").to_string());
        for d in &i.dependents {
            out.line(format!(
                "  {:>2}  {}  {}",
                d.distance,
                d.path,
                dim.apply_to(format!("→ {}", d.via))
            ));
        }
    }
    if !i.possible.is_empty() {
        out.line(format!(
            "{} {}",
            bold.apply_to("possibly referenced by"),
            dim.apply_to("(resolved by name only)")
        ));
        for s in &i.possible {
            out.line(format!(
                "      {}:{} {}",
                s.path,
                s.line,
                s.qualified_name.as_deref().unwrap_or("<top level>")
            ));
        }
    }
    if i.unlisted > 0 {
        out.line(
            dim.apply_to(format!("  … {} more not listed (--depth, --limit)", i.unlisted))
                .to_string(),
        );
    }
    if i.tests.is_empty() {
        out.line(format!("{} none found", bold.apply_to("tests:")));
        return;
    }
    out.line(format!("{} ({})", bold.apply_to("tests to run"), i.tests.len()));
    // On a terminal, what does not fit goes on lines of its own, wrapped.
    const INDENT: &str = "          ";
    let width = out.width();
    let wrapped = width.map(|w| w.saturating_sub(INDENT.len()).max(20));
    for t in &i.tests {
        let p = format!("{:?}", t.priority).to_lowercase();
        let head = format!("  {p:<6}  {}", t.path);
        let why = format!("{} [{}]", reasons(&t.reasons), t.convention);
        if width.is_some_and(|w| head.chars().count() + 2 + why.chars().count() > w) {
            out.line(head);
            for l in wrap(&why, wrapped) {
                out.line(format!("{INDENT}{}", dim.apply_to(l)));
            }
        } else {
            out.line(format!("{head}  {}", dim.apply_to(why)));
        }
        if !t.functions.is_empty() {
            // A test file can hold hundreds of tests; a few say which kind (24.15).
            const SHOWN: usize = 8;
            let mut names = t.functions.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
            if t.functions.len() > SHOWN {
                names.push_str(&format!(
                    ", … {} more (--json lists all)",
                    t.functions.len() - SHOWN
                ));
            }
            for l in wrap(&names, wrapped) {
                out.line(format!("{INDENT}{}", dim.apply_to(l)));
            }
        }
    }
}

/// The first few reasons a test file is listed for, and how many more: a file of
/// tests named after the target has one reason per test, and all of them made one
/// 2,225-character line (issue 32.9). `--json` keeps every one.
fn reasons(all: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut text = all.iter().take(SHOWN).map(String::as_str).collect::<Vec<_>>().join("; ");
    if all.len() > SHOWN {
        text.push_str(&format!("; … {} more (--json lists all)", all.len() - SHOWN));
    }
    text
}
