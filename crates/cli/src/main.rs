//! `ironbees`: the one binary.
//!
//! Flags are parsed in two stages, as ripgrep does: clap turns argv into plain data
//! (`Cli`), then each subcommand module turns that data into calls on the library
//! crates. This crate is the only one that prints, reads the environment, installs
//! signal handlers and chooses exit codes; libraries return values and errors.
#![allow(clippy::print_stdout, clippy::print_stderr)] // printing is this crate's job

mod alloc;
mod cmd;
mod exit;
mod output;
mod repo_context;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

const AFTER_HELP: &str = "\
Examples:
  ironbees demo                           agent mode on a demo project, start to end
  ironbees run \"Fix the division by zero in calculate()\"   agent mode: plan, approve, code, test
  ironbees index                          index the current repository
  ironbees -C ~/src/flask symbols --name 'Flask*' --kind class
  ironbees skeleton src/app.py            signatures only, bodies elided
  ironbees status --json                  counts, languages, skipped files
  ironbees ask 'where are routes registered?'   streamed answer, repository map as context
  ironbees llm check                      call each configured model provider
  ironbees config show                    effective configuration, secrets masked
  ironbees test --json                    run the tests in the sandbox, parsed results
  ironbees exec --timeout 30s -- make     any command, sandboxed
  ironbees change src/a.py --find 'x = 1' --replace 'x = 2'   journaled edit, diff shown
  ironbees undo                           revert the last edit (`redo` re-applies it)
  ironbees repomap --tokens 2048 --query 'checkout ignores discounts'   ranked map
  ironbees impact src/cart.py             dependents, blast radius, tests to run
  ironbees graph callers Cart.total       who calls it, as a tree
  ironbees hotspots                       churn × complexity × fan-in
  ironbees report --format md             architecture report with a Mermaid diagram
  ironbees understand src/app.py          everything about a file in one answer
  ironbees mcp -C ~/src/app               the MCP server (stdio) for coding agents
  ironbees serve                          the HTTP API, web console and /mcp on 127.0.0.1:8642

Exit codes:
  0 success    1 error    2 bad usage or argument (also a target naming several definitions)    3 not found
  4 path outside the project root    5 index corrupt or stale
  6 a sandbox limit fired    7 model provider unavailable, rate limited or bad response
  8 budget exceeded    9 edit conflict: no match, ambiguous match, file changed
  (hash mismatch) or already exists; nothing was written
  10 an agent run waits for a human (`ironbees runs approve|reject ID`)
  11 a guardrail blocked the change (`ironbees guard check`)
  127 command not found    130 cancelled (Ctrl-C)
  `ironbees exec` exits with the command's own code (see `ironbees exec --help`).
Errors print `error[CODE]: message` on stderr (a JSON object with --json).
IRONBEES_LOG=debug (a tracing filter) writes logs to stderr (IRONBEES_LOG_FORMAT=json: JSON lines);\nsecrets never appear. OTEL_EXPORTER_OTLP_ENDPOINT (or observability.otlp.endpoint)\nexports OpenTelemetry spans and metrics.";

/// Code intelligence, safe edits and agents for real repositories.
#[derive(Debug, Parser)]
#[command(name = "ironbees", version, about, after_help = AFTER_HELP)]
pub struct Cli {
    /// Run as if ironbees was started in DIR (like `git -C`).
    #[arg(short = 'C', global = true, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// Print results as JSON on stdout (errors as JSON on stderr).
    #[arg(long, global = true)]
    pub json: bool,

    /// When to use colors: auto (only on a terminal), always, never.
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto")]
    pub color: output::ColorChoice,

    /// The logs' format on stderr (what IRONBEES_LOG turns on): text, or json for
    /// JSON Lines (as IRONBEES_LOG_FORMAT=json).
    #[arg(long, global = true, value_name = "FORMAT")]
    pub log_format: Option<LogFormatArg>,

    /// Run as `commitly` (the binary invoked under that name): the commit
    /// pipeline's state under `.commitly/` instead of `.ironbees/`.
    #[arg(long, global = true, hide = true)]
    pub commitly: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormatArg {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build or refresh the code index under .ironbees/ (only changed files are re-parsed),
    /// with the search index and the project snapshot later commands read.
    #[command(
        after_help = "Example:\n  ironbees index --exclude 'vendor/**' --max-file-size 2000000"
    )]
    Index(cmd::index::IndexArgs),
    /// List definitions from the index.
    #[command(after_help = "Example:\n  ironbees symbols --name 'parse_*' --kind function --json")]
    Symbols(cmd::symbols::SymbolsArgs),
    /// Show a file's signatures, type definitions and first doc lines, bodies elided.
    #[command(after_help = "Example:\n  ironbees skeleton crates/code-index/src/lib.rs")]
    Skeleton(cmd::skeleton::SkeletonArgs),
    /// Rank the files that matter for a request (issue text, question, stack trace).
    #[command(after_help = "Example:\n  ironbees localize --query-file issue.md -k 5 --json")]
    Localize(cmd::localize::LocalizeArgs),
    /// What a request asks for (fix, feature, refactor, explain, test, or a symbol,
    /// flow or concept lookup), whether it needs a change, and the retrievers and
    /// top-k to gather its context within a budget. Rule-based, English and Korean.
    #[command(after_help = cmd::route::AFTER_HELP)]
    Route(cmd::route::RouteArgs),
    /// Find definitions by name, words, path or error message (hybrid: BM25, names,
    /// paths, graph neighbours; rank fusion).
    #[command(after_help = cmd::search::AFTER_HELP)]
    Search(cmd::search::SearchArgs),
    /// A ranked map of the repository's most important definitions, in a token budget.
    #[command(after_help = cmd::repomap::AFTER_HELP)]
    Repomap(cmd::repomap::RepomapArgs),
    /// Dependency and call graphs around a file or definition: `graph deps`, `calls`,
    /// `callers`, `callees`.
    #[command(subcommand, after_help = cmd::graph::AFTER_HELP)]
    Graph(cmd::graph::GraphCommand),
    /// What changing a file or definition affects: dependents, radius, tests to run.
    #[command(after_help = cmd::impact::AFTER_HELP)]
    Impact(cmd::impact::ImpactArgs),
    /// Files and definitions that change often and are hard to change.
    #[command(after_help = cmd::hotspots::AFTER_HELP)]
    Hotspots(cmd::hotspots::HotspotsArgs),
    /// An architecture report: central files and definitions with roles, hotspots,
    /// blast radius, cycles, insights and a Mermaid module map.
    #[command(after_help = cmd::report::AFTER_HELP)]
    Report(cmd::report::ReportArgs),
    /// Files, symbols, languages, skipped files and staleness of the index.
    #[command(after_help = "Example:\n  ironbees status --json")]
    Status(cmd::status::StatusArgs),
    /// Ask a model a one-shot question, with the repository map as context when an index exists.
    #[command(after_help = cmd::ask::AFTER_HELP)]
    Ask(cmd::ask::AskArgs),
    /// Model providers: `llm check` calls each configured provider.
    #[command(subcommand, after_help = "Example:\n  ironbees llm check --json")]
    Llm(cmd::llm::LlmCommand),
    /// Configuration: `config show` prints the merged configuration, secrets masked.
    #[command(subcommand, after_help = "Example:\n  ironbees config show --json")]
    Config(cmd::config::ConfigCommand),
    /// Guardrails: `guard check` a change (staged, a range, a patch) against the rules
    /// agent runs keep; `guard rules` lists them.
    #[command(
        subcommand,
        after_help = "Example:\n  ironbees guard check --staged\n  ironbees guard rules"
    )]
    Guard(cmd::guard::GuardCommand),
    /// Run a command in the sandbox: time, memory and process limits, network off,
    /// everything but the workspace read-only, secrets hidden.
    #[command(after_help = cmd::exec::EXEC_HELP)]
    Exec(cmd::exec::ExecArgs),
    /// Build the project in the sandbox and report errors and warnings with locations.
    #[command(after_help = cmd::build::BUILD_HELP)]
    Build(cmd::build::BuildArgs),
    /// Run the project's tests in the sandbox and report totals and failures.
    #[command(after_help = cmd::test::TEST_HELP)]
    Test(cmd::test::TestArgs),
    /// Change files in one journaled, all-or-nothing transaction (diff on stdout).
    #[command(after_help = cmd::change::AFTER_HELP)]
    Change(cmd::change::ChangeArgs),
    /// Undo an edit transaction (default: the newest applied one).
    #[command(after_help = "Example:\n  ironbees undo 3f2a9c --dry-run")]
    Undo(cmd::history::UndoArgs),
    /// Re-apply an undone edit (default: the most recently undone one).
    #[command(after_help = "Example:\n  ironbees redo")]
    Redo(cmd::history::UndoArgs),
    /// The edit history, newest first; with an id, that transaction's diffs.
    #[command(after_help = "Example:\n  ironbees history --json\n  ironbees history 3f2a9c")]
    History(cmd::history::HistoryArgs),
    /// Understand a file, directory, symbol or question in one answer (skeleton, symbols,
    /// dependencies, call graph, PageRank, impact, report, next actions).
    #[command(after_help = cmd::pillar::UNDERSTAND_HELP)]
    Understand(cmd::pillar::UnderstandArgs),
    /// Definition, references (the default), callers, callees, implementations or type
    /// hierarchy of a symbol.
    #[command(after_help = cmd::pillar::NAVIGATE_HELP)]
    Navigate(cmd::pillar::NavigateArgs),
    /// Read a file whole, as a skeleton, a fragment (--lines, --symbol) or a diff; prints its hash.
    #[command(
        after_help = "Example:\n  ironbees read src/app.py --symbol App.run\n  ironbees read src/app.py --diff 3f2a9c"
    )]
    Read(cmd::pillar::ReadArgs),
    /// Create a file from content, a template (module, test, class) or an existing file.
    #[command(
        after_help = "Example:\n  ironbees write tests/test_orders.py --template test\n  ironbees write app/orders.py --from app/users.py"
    )]
    Write(cmd::pillar::WriteArgs),
    /// Project state: status, undo, redo, history, rebuild (the index), test.
    #[command(
        after_help = "Example:\n  ironbees manage status --json\n  ironbees manage rebuild --full\n  ironbees manage test --target tests/test_api.py"
    )]
    Manage(cmd::pillar::ManageArgs),
    /// Serve every operation over MCP (stdio) for Claude Code, Codex, Cursor, Goose, ...
    #[command(after_help = cmd::pillar::MCP_HELP)]
    Mcp(cmd::pillar::McpArgs),
    /// Serve agent mode over HTTP: start, stream, approve and cancel runs; a web
    /// console; the tools over MCP's streamable HTTP transport.
    #[command(after_help = cmd::serve::SERVE_HELP)]
    Serve(cmd::serve::ServeArgs),
    /// Agent mode: plan, approve, code, build and test in the sandbox, until the tests
    /// pass or a human is needed; the change is applied only once it is validated.
    #[command(after_help = cmd::run::RUN_HELP)]
    Run(cmd::run::RunArgs),
    /// Agent mode on a demo project with a bug, start to end (a scripted model when
    /// none is configured).
    #[command(after_help = cmd::demo::AFTER_HELP)]
    Demo(cmd::demo::DemoArgs),
    /// The commit pipeline (seed 003): init, start, install-hook, status, list, show,
    /// resume, cancel, report.
    #[command(subcommand, after_help = cmd::pipeline::PIPELINE_HELP)]
    Pipeline(cmd::pipeline::PipelineCommand),
    /// `git commit`, then the commit pipeline on the new commit.
    #[command(after_help = cmd::pipeline::PIPELINE_HELP)]
    Commit(cmd::pipeline::CommitArgs),
    /// Agent runs: list, show, approve, reject, resume, cancel, log.
    #[command(subcommand, after_help = cmd::run::RUNS_HELP)]
    Runs(cmd::run::RunsCommand),
    /// The agents runs use (built-in, user, project): list, show, new.
    #[command(subcommand, after_help = cmd::agents::AFTER_HELP)]
    Agents(cmd::agents::AgentsCommand),
    /// Every tool the MCP server and the agents call (built-in and the configured MCP
    /// servers'): `tools list`, `tools call NAME --args JSON`.
    #[command(after_help = cmd::tool::TOOLS_HELP)]
    Tools(cmd::tool::ToolsArgs),
    /// Call one tool by name with its JSON arguments, as an MCP client would (the same
    /// as `tools call`).
    #[command(after_help = cmd::tool::TOOL_HELP)]
    Tool(cmd::tool::ToolArgs),
}

/// As `commitly` (a symlink to this binary), the seed's spellings:
/// `commitly init`, `commitly git commit -m MSG`, `commitly report`, ... become
/// `ironbees --commitly pipeline init`, `ironbees --commitly commit -m MSG`, ...
fn commitly_args(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let invoked_as = args.first().map(std::path::Path::new).and_then(|p| p.file_stem());
    if invoked_as.and_then(|n| n.to_str()) != Some("commitly") {
        return args;
    }
    let mut out: Vec<std::ffi::OsString> = vec!["commitly".into(), "--commitly".into()];
    let rest = &args[1..];
    let word = |i: usize| rest.get(i).and_then(|a| a.to_str());
    match word(0) {
        Some("git") if word(1) == Some("commit") => {
            out.push("commit".into());
            out.extend(rest[2..].iter().cloned());
        }
        Some(
            "init" | "start" | "report" | "status" | "list" | "show" | "resume" | "cancel"
            | "install-hook",
        ) => {
            out.push("pipeline".into());
            out.extend(rest.iter().cloned());
        }
        _ => out.extend(rest.iter().cloned()),
    }
    out
}

fn main() {
    // The sandbox helper is this binary re-executed; it must start before anything
    // else (no threads, no signal handlers, no configuration).
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).and_then(|a| a.to_str()) == Some(sandbox::HELPER_ARG) {
        std::process::exit(sandbox::helper_main(&args[2..]));
    }
    alloc::install_tree_sitter_allocator();
    let args = commitly_args(args);
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        // Help and version go to stdout as clap prints them; a usage error gets the
        // same `error[CODE]` line (or JSON object) as every other error (24.15).
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            let json = std::env::args().any(|a| a == "--json");
            let out = output::Output::new(json, output::ColorChoice::Auto);
            let text = e.render().to_string();
            let message = text.trim().trim_start_matches("error: ").to_owned();
            out.error(&protocol::ErrorInfo::new(protocol::ErrorCode::InvalidArgument, message));
            std::process::exit(2);
        }
    };
    let out = output::Output::new(cli.json, cli.color);
    let result = cmd::run(&cli, &out);
    match result {
        Ok(code) => std::process::exit(code),
        // A closed stdout (`ironbees symbols | head`) is how a reader says it has
        // enough: stop quietly, as `git` and `rg` do.
        Err(err)
            if err.chain().any(|c| {
                let kind =
                    c.downcast_ref::<std::io::Error>().map(std::io::Error::kind).or_else(|| {
                        c.downcast_ref::<serde_json::Error>()
                            .and_then(serde_json::Error::io_error_kind)
                    });
                kind == Some(std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            std::process::exit(0)
        }
        Err(err) => {
            let info = exit::error_info(&err);
            out.error(&info);
            std::process::exit(exit::exit_code_of(&info));
        }
    }
}
