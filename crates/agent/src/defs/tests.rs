use std::path::Path;

use expect_test::{Expect, expect};
use protocol::ErrorCode;
use test_support::TempProject;

use super::*;

/// Every tool a built-in may name, and which ones each built-in has.
const ALL_TOOLS: &[&str] =
    &["understand", "navigate", "read", "localize", "search", "repomap", "change", "write"];
const BUILT_IN_TOOLS: &[(&str, &[&str])] = &[
    ("coder", &["read", "navigate", "understand", "search", "change", "write"]),
    ("planner", &["understand", "navigate", "read", "localize", "search", "repomap"]),
    ("validator", &["read", "navigate"]),
    ("critic", &[]),
    ("answerer", &["read", "navigate", "search", "understand"]),
];

/// `text` with the temporary root removed, so paths read `agents/x/agent.yaml`.
fn relative(root: &Path, text: &str) -> String {
    text.replace(&format!("{}/", root.display()), "")
}

/// The built-in registry narrowed to `names`.
fn registry(names: &[&str]) -> engine::Registry {
    engine::Registry::new().only(names).unwrap()
}

fn load_project(p: &TempProject) -> Result<AgentSet> {
    AgentSet::load(&AgentDirs::conventional(None, p.root()))
}

#[test]
fn built_ins_load_and_have_exactly_their_tools() {
    let set = AgentSet::load(&AgentDirs::default()).unwrap();
    assert_eq!(
        set.names().collect::<Vec<_>>(),
        ["answerer", "coder", "critic", "planner", "validator"]
    );
    for &(name, tools) in BUILT_IN_TOOLS {
        let def = set.get(name).unwrap();
        assert_eq!(def.source, AgentSource::BuiltIn);
        assert_eq!(def.required_tools, tools, "{name}");
        def.validate_tools(&registry(tools)).unwrap();
        // The prompt describes the tools the agent has and no others, so a model
        // is never told to call a tool it was not given.
        for tool in ALL_TOOLS {
            let mentioned = def.prompt.contains(&format!("`{tool}`"));
            assert_eq!(mentioned, tools.contains(tool), "{name}'s prompt and `{tool}`");
        }
    }
}

#[test]
fn built_in_prompts_name_their_contracts() {
    let set = AgentSet::load(&AgentDirs::default()).unwrap();
    let cases: &[(&str, &[&str])] = &[
        (
            "planner",
            &[
                "\"spec\"",
                "\"summary\"",
                "\"steps\"",
                "\"number\"",
                "\"description\"",
                "\"actionType\"",
                "\"filePath\"",
                "\"rationale\"",
                "\"affectedFiles\"",
                "\"complexity\"",
                "`CREATE`",
                "`MODIFY`",
                "`DELETE`",
                "`REFACTOR`",
                "`LOW`",
                "`MEDIUM`",
                "`HIGH`",
            ],
        ),
        (
            "coder",
            &[
                "`targetString`",
                "`replacementString`",
                "`expectedHash`",
                "\"dryRun\"",
                "error context",
            ],
        ),
        ("validator", &["`path:line`", "never edit"]),
    ];
    for &(name, needles) in cases {
        let prompt = &set.get(name).unwrap().prompt;
        for needle in needles {
            assert!(prompt.contains(needle), "{name}'s prompt lacks {needle}");
        }
        assert!(
            !prompt.contains(".NET") && !prompt.contains("Roslyn"),
            "{name} is language-agnostic"
        );
    }
}

#[test]
fn later_sources_override_by_name_and_add_new_names() {
    let user = TempProject::with_fixture(
        r#"
//- coder/agent.yaml
name: coder
description: user coder
//- coder/prompt.md
user coder prompt
//- reviewer/agent.yaml
name: reviewer
description: user reviewer
//- reviewer/prompt.md
user reviewer prompt
"#,
    );
    let project = TempProject::with_fixture(
        r#"
//- agents/reviewer/agent.yaml
name: reviewer
description: project reviewer
promptTemplate: prompts/review.md
//- agents/reviewer/prompts/review.md
project reviewer prompt
//- agents/docs/agent.yaml
name: docs
description: project docs (agents/)
//- agents/docs/prompt.md
docs prompt
//- agents/utils/helpers.py
# a code directory named agents/ without agent.yaml is not an agent
//- agents/.hidden/agent.yaml
not: even: yaml
//- .ironbees/agents/docs/agent.yaml
name: docs
description: project docs (.ironbees/agents/)
//- .ironbees/agents/docs/prompt.md
docs prompt, ironbees
"#,
    );
    let set =
        AgentSet::load(&AgentDirs::conventional(Some(user.root().to_path_buf()), project.root()))
            .unwrap();
    let got: String = set
        .iter()
        .map(|d| {
            let source = d.source.to_string();
            let first_line = d.prompt.lines().next().unwrap_or_default();
            format!("{} | {} | {first_line} | {source}\n", d.name, d.description)
        })
        .collect();
    let got = got
        .replace(&user.root().display().to_string(), "USER")
        .replace(&project.root().display().to_string(), "PROJECT");
    expect![[r#"
        answerer | Answers a question about the code (explain, where is, how does) without changing anything (read-only) | # Answerer | built-in
        coder | user coder | user coder prompt | user (USER/coder)
        critic | Reviews each round's change before it is built and tested; blockers send it back to the coder (runs with --critic) | # Critic | built-in
        docs | project docs (.ironbees/agents/) | docs prompt, ironbees | project (PROJECT/.ironbees/agents/docs)
        planner | Reads the code and turns a request into a step-by-step plan for approval (read-only) | # Planner | built-in
        reviewer | project reviewer | project reviewer prompt | project (PROJECT/agents/reviewer)
        validator | Explains why a build or test run failed and where the coder must fix it (read-only) | # Validator | built-in
    "#]].assert_eq(&got);
}

/// Loads a project whose `agents/` holds `fixture`; the error, with paths relative
/// to the project root.
fn check_error(fixture: &str, expect: Expect) {
    let p = TempProject::with_fixture(fixture);
    let err = load_project(&p).expect_err("the definition is bad");
    assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
    expect.assert_eq(&relative(p.root(), &err.to_string()));
}

#[test]
fn yaml_syntax_errors() {
    check_error(
        r#"
//- agents/planner/agent.yaml
name: planner
  description: indented under a scalar
"#,
        expect!["agents/planner/agent.yaml:2:14: mapping values are not allowed in this context"],
    );
    check_error(
        "//- agents/planner/agent.yaml\nname: planner\ndescription: \"unterminated\nrequiredTools: []\n",
        expect![
            "agents/planner/agent.yaml:4:1: found unexpected end of stream, while scanning a quoted scalar at line 2 column 14"
        ],
    );
    check_error(
        "//- agents/planner/agent.yaml\nname: planner\ndescription: plans\nrequiredTools:\n\t- read\n",
        expect![
            "agents/planner/agent.yaml:4:1: found character that cannot start any token, while scanning for the next token (a tab: YAML indents with spaces)"
        ],
    );
}

#[test]
fn unknown_top_level_key() {
    check_error(
        r#"
//- agents/planner/agent.yaml
name: planner
description: plans
requiredTool:
  - read
"#,
        expect![
            "agents/planner/agent.yaml:3:1: unknown field `requiredTool`, expected one of `name`, `description`, `version`, `requiredTools`, `promptTemplate`, `llmConfig`, `toolConfig`"
        ],
    );
}

#[test]
fn unknown_nested_key() {
    check_error(
        r#"
//- agents/planner/agent.yaml
# comments count as lines
name: planner
description: plans

llmConfig:
  model: m
  maxToken: 5
"#,
        expect![
            "agents/planner/agent.yaml:7:3: llmConfig: unknown field `maxToken`, expected one of `model`, `maxTokens`, `temperature`"
        ],
    );
}

#[test]
fn wrong_types() {
    check_error(
        r#"
//- agents/planner/agent.yaml
name: planner
description: plans
llmConfig:
  maxTokens: lots
"#,
        expect![[
            r#"agents/planner/agent.yaml:4:14: llmConfig.maxTokens: invalid type: string "lots", expected u32"#
        ]],
    );
    check_error(
        r#"
//- agents/planner/agent.yaml
name: planner
description: plans
requiredTools: read
"#,
        expect![[
            r#"agents/planner/agent.yaml:3:16: requiredTools: invalid type: string "read", expected a sequence"#
        ]],
    );
    check_error(
        r#"
//- agents/planner/agent.yaml
- name: planner
"#,
        expect![
            "agents/planner/agent.yaml:1:1: invalid type: sequence, expected an agent definition (a mapping with `name`, `description`, ...)"
        ],
    );
}

#[test]
fn missing_keys_and_empty_file() {
    check_error(
        r#"
//- agents/planner/agent.yaml
description: plans
"#,
        expect!["agents/planner/agent.yaml:1:1: missing field `name`"],
    );
    check_error(
        r#"
//- agents/planner/agent.yaml
name: planner
"#,
        expect!["agents/planner/agent.yaml:1:1: missing field `description`"],
    );
    check_error(
        r#"
//- agents/planner/agent.yaml

"#,
        expect![
            "agents/planner/agent.yaml:1:1: the file is empty; it needs at least `name` and `description`"
        ],
    );
}

#[test]
fn duplicate_key() {
    check_error(
        r#"
//- agents/planner/agent.yaml
name: planner
description: plans
name: planner
"#,
        expect!["agents/planner/agent.yaml:3:7: duplicate field `name`"],
    );
}

#[test]
fn name_differs_from_directory() {
    check_error(
        r#"
//- agents/planner/agent.yaml
description: plans
name:   plannr
"#,
        expect![
            "agents/planner/agent.yaml:2:9: name `plannr` differs from its directory `planner`; rename one so they match"
        ],
    );
}

#[test]
fn invalid_name() {
    check_error(
        r#"
//- agents/Planner/agent.yaml
name: Planner
description: plans
"#,
        expect![[
            r#"agents/Planner/agent.yaml:1:7: name "Planner": must start with a lowercase letter a-z"#
        ]],
    );
}

#[test]
fn missing_prompt_file() {
    check_error(
        r#"
//- agents/planner/agent.yaml
name: planner
description: plans
promptTemplate: plan.md
//- agents/planner/prompt.md
the default exists, but is not the one named
"#,
        expect!["agents/planner/agent.yaml:3:17: prompt file agents/planner/plan.md not found"],
    );
    check_error(
        r#"
//- agents/planner/agent.yaml
name: planner
description: plans
"#,
        expect![
            "agents/planner/agent.yaml: prompt file agents/planner/prompt.md not found (promptTemplate defaults to prompt.md)"
        ],
    );
}

#[test]
fn prompt_outside_the_agent_directory() {
    check_error(
        r#"
//- agents/planner/agent.yaml
name: planner
description: plans
promptTemplate: ../../secrets.txt
//- secrets.txt
s3cr3t
"#,
        expect![[
            r#"agents/planner/agent.yaml:3:17: promptTemplate "../../secrets.txt" must be a file inside the agent's directory (a relative path without `..`)"#
        ]],
    );
}

#[cfg(unix)]
#[test]
fn prompt_symlinked_outside_the_agents_directory() {
    let p = TempProject::with_fixture(
        r#"
//- agents/planner/agent.yaml
name: planner
description: plans
//- secrets.txt
s3cr3t
"#,
    );
    std::os::unix::fs::symlink(p.path("secrets.txt"), p.path("agents/planner/prompt.md")).unwrap();
    let err = load_project(&p).expect_err("the prompt leaves the directory");
    expect!["agents/planner/agent.yaml: agents/planner/prompt.md resolves outside agents (a symlink); refused"].assert_eq(&relative(p.root(), &err.to_string()));
}

#[test]
fn unknown_required_tools_name_the_file_and_the_known_tools() {
    let set = AgentSet::load(&AgentDirs::default()).unwrap();
    let err = set
        .get("coder")
        .unwrap()
        .validate_tools(&registry(&["read", "search", "navigate"]))
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolNotFound);
    expect!["<built-in>/coder/agent.yaml: agent `coder` requires unknown tools `understand`, `change`, `write`; known tools: navigate, read, search"].assert_eq(&err.to_string());

    let p = TempProject::with_fixture(
        r#"
//- agents/lint/agent.yaml
name: lint
description: lints
requiredTools: [read, shellcheck]
//- agents/lint/prompt.md
Lint.
"#,
    );
    let err = load_project(&p)
        .unwrap()
        .get("lint")
        .unwrap()
        .validate_tools(&registry(&["read"]))
        .unwrap_err();
    expect![
        "agents/lint/agent.yaml: agent `lint` requires unknown tool `shellcheck`; known tools: read"
    ]
    .assert_eq(&relative(p.root(), &err.to_string()));
}

#[test]
fn definitions_serialize_to_camel_case_json() {
    let p = TempProject::with_fixture(
        r#"
//- .ironbees/agents/reviewer/agent.yaml
name: reviewer
description: reviews diffs
version: 0.2.0
requiredTools: [read]
promptTemplate: review.md
llmConfig:
  model: small-model
  maxTokens: 2048
  temperature: 0.2
toolConfig:
  read:
    view: skeleton
    maxLines: 400
//- .ironbees/agents/reviewer/review.md
Review the diff.
"#,
    );
    let set = load_project(&p).unwrap();
    let json = serde_json::to_string_pretty(set.get("reviewer").unwrap()).unwrap();
    expect![[r#"
        {
          "name": "reviewer",
          "description": "reviews diffs",
          "version": "0.2.0",
          "requiredTools": [
            "read"
          ],
          "promptTemplate": "review.md",
          "llmConfig": {
            "model": "small-model",
            "maxTokens": 2048,
            "temperature": 0.2
          },
          "toolConfig": {
            "read": {
              "view": "skeleton",
              "maxLines": 400
            }
          },
          "prompt": "Review the diff.\n",
          "source": {
            "kind": "project",
            "path": ".ironbees/agents/reviewer"
          }
        }"#]]
    .assert_eq(&relative(p.root(), &json));
}

const INSTRUCTIONS_FIXTURE: &str = r#"
//- AGENTS.md
Root: run `make test`.
//- src/AGENTS.md
Src: no unwrap.
//- src/api/AGENTS.md
Api: keep handlers thin.
//- src/api/handler.rs
fn handle() {}
//- docs/AGENTS.md
Docs: one sentence per line.
//- lib/util.rs
fn util() {}
"#;

/// The `AGENTS.md` files that apply to `paths`, as `path: text` lines.
fn check_instructions(paths: &[&str], expect: Expect) {
    let p = TempProject::with_fixture(INSTRUCTIONS_FIXTURE);
    let got = project_instructions(p.root(), paths, 10_000);
    assert!(got.omitted.is_empty() && got.unreadable.is_empty(), "{got:?}");
    let text: String =
        got.files.iter().map(|f| format!("{}: {}\n", f.path, f.text.trim_end())).collect();
    expect.assert_eq(&text);
}

#[test]
fn instructions_root_only() {
    check_instructions(
        &[],
        expect![[r#"
        AGENTS.md: Root: run `make test`.
    "#]],
    );
}

#[test]
fn instructions_nested_on_the_way_to_a_file() {
    check_instructions(
        &["src/api/handler.rs"],
        expect![[r#"
        AGENTS.md: Root: run `make test`.
        src/AGENTS.md: Src: no unwrap.
        src/api/AGENTS.md: Api: keep handlers thin.
    "#]],
    );
}

#[test]
fn instructions_a_directory_counts_its_own_file() {
    check_instructions(
        &["src/api"],
        expect![[r#"
        AGENTS.md: Root: run `make test`.
        src/AGENTS.md: Src: no unwrap.
        src/api/AGENTS.md: Api: keep handlers thin.
    "#]],
    );
    check_instructions(
        &["./src/api/"],
        expect![[r#"
        AGENTS.md: Root: run `make test`.
        src/AGENTS.md: Src: no unwrap.
        src/api/AGENTS.md: Api: keep handlers thin.
    "#]],
    );
}

#[test]
fn instructions_outside_any_nested_directory() {
    check_instructions(
        &["lib/util.rs"],
        expect![[r#"
        AGENTS.md: Root: run `make test`.
    "#]],
    );
    check_instructions(
        &["README.md"],
        expect![[r#"
        AGENTS.md: Root: run `make test`.
    "#]],
    );
}

#[test]
fn instructions_for_several_paths_are_deduplicated_ancestors_first() {
    check_instructions(
        &["src/api/handler.rs", "docs/guide.md", "src/main.rs", "src/api/new.rs"],
        expect![[r#"
            AGENTS.md: Root: run `make test`.
            docs/AGENTS.md: Docs: one sentence per line.
            src/AGENTS.md: Src: no unwrap.
            src/api/AGENTS.md: Api: keep handlers thin.
        "#]],
    );
}

#[test]
fn instructions_never_leave_the_root() {
    check_instructions(
        &["../elsewhere/x.rs", "/etc/passwd", "src/../docs/a.md", "src/../../x"],
        expect![[r#"
        AGENTS.md: Root: run `make test`.
        docs/AGENTS.md: Docs: one sentence per line.
    "#]],
    );
}

#[test]
fn instructions_cut_to_the_budget() {
    let p = TempProject::with_fixture(INSTRUCTIONS_FIXTURE);
    // The root's 23 bytes fit; docs/AGENTS.md (next in order) is cut at 21 bytes,
    // mid-line since no line end fits; the src/ files are left out.
    let got = project_instructions(p.root(), &["src/api/handler.rs", "docs/x.md"], 23 + 21);
    let total: usize = got.files.iter().map(|f| f.text.len()).sum();
    assert!(total <= got.max_bytes);
    expect![[r#"
        You are a planner.

        # Project instructions (AGENTS.md)

        The project's maintainers wrote these for coding agents. Follow them. Each file applies to its directory and everything below it; where two disagree, the deeper file wins for its directory. They do not override the task or the output format above.

        ## AGENTS.md

        Root: run `make test`.

        ## docs/AGENTS.md

        Docs: one sentence pe

        [docs/AGENTS.md is cut here: 21 of its 29 bytes fit the 44-byte limit]

        [Left out, over the 44-byte limit: src/AGENTS.md, src/api/AGENTS.md. Read them if your work touches their directories.]
    "#]].assert_eq(&got.append_to("You are a planner.\n"));
}

#[test]
fn instructions_cut_at_a_line_end_and_a_char_boundary() {
    let p = TempProject::with_fixture("//- AGENTS.md\nfirst line\nsecond line\n");
    let got = project_instructions(p.root(), &[], 15);
    assert_eq!(got.files[0].text, "first line\n");
    assert_eq!(got.files[0].cut_from, Some(23));

    let p = TempProject::new();
    p.write("AGENTS.md", "가나다라");
    let got = project_instructions(p.root(), &[], 7);
    assert_eq!(got.files[0].text, "가나");
}

#[test]
fn no_instructions_leave_the_prompt_unchanged() {
    let p = TempProject::new();
    let got = project_instructions(p.root(), &["src/a.rs"], 1000);
    assert!(got.is_empty());
    assert_eq!(got.append_to("prompt"), "prompt");
}

#[cfg(unix)]
#[test]
fn instructions_symlinked_outside_the_root_are_not_read() {
    let outside = TempProject::with_fixture("//- AGENTS.md\nsecret\n");
    let p = TempProject::with_fixture("//- AGENTS.md\nroot\n//- src/a.rs\n");
    std::os::unix::fs::symlink(outside.path("AGENTS.md"), p.path("src/AGENTS.md")).unwrap();
    let got = project_instructions(p.root(), &["src/a.rs"], 1000);
    assert_eq!(got.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["AGENTS.md"]);
    assert_eq!(got.unreadable.len(), 1, "{got:?}");
    assert_eq!(got.unreadable[0].0, "src/AGENTS.md");
    assert!(!got.append_to("").contains("secret"));
}

/// Writes `scaffold(name, description)` into a project's `agents/` and loads it.
fn scaffold_and_load(name: &str, description: Option<&str>) -> AgentDef {
    let p = TempProject::new();
    let files = scaffold(name, description).unwrap();
    let paths: Vec<&str> = files.iter().map(|(path, _)| path.as_str()).collect();
    assert_eq!(paths, [format!("{name}/agent.yaml"), format!("{name}/prompt.md")]);
    for (path, text) in &files {
        p.write(&format!("agents/{path}"), text);
    }
    let def = load_project(&p).unwrap().get(name).unwrap().clone();
    assert_eq!(def.source, AgentSource::Project(p.path(&format!("agents/{name}"))));
    def.validate_tools(&registry(ALL_TOOLS)).unwrap();
    def
}

#[test]
fn scaffold_loads_back() {
    let def = scaffold_and_load("reviewer", Some("Reviews a diff"));
    assert_eq!(def.description, "Reviews a diff");
    assert_eq!(def.prompt_template, "prompt.md");
    assert!(def.prompt.starts_with("# reviewer\n"), "{}", def.prompt);

    let def = scaffold_and_load("a", None);
    assert_eq!(def.description, "What this agent does, in one line");
}

#[test]
fn scaffold_keeps_any_description() {
    for description in [
        "key: value # not a comment",
        "\"quoted\" and 'single' and \\backslash",
        "two\nlines\tand a tab",
        "- looks like a list",
        "null",
        "설명과 이모지 🐝",
        "control \u{7f}\u{85}\u{1b}",
    ] {
        let def = scaffold_and_load("x", Some(description));
        assert_eq!(def.description, description);
    }
}

#[test]
fn scaffold_checks_the_name() {
    let cases = [
        ("", "a name cannot be empty"),
        ("Reviewer", "must start with a lowercase letter a-z"),
        ("1st", "must start with a lowercase letter a-z"),
        ("-x", "must start with a lowercase letter a-z"),
        ("a b", "' ' is not allowed; use a-z, 0-9, `_` and `-`"),
        ("a/b", "'/' is not allowed; use a-z, 0-9, `_` and `-`"),
        ("..", "must start with a lowercase letter a-z"),
        ("café", "'é' is not allowed; use a-z, 0-9, `_` and `-`"),
        ("abcdefghijklmnopqrstuvwxyz-0123456789_abc", "at most 40 characters, this one has 41"),
    ];
    for (name, reason) in cases {
        let err = scaffold(name, None).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument);
        assert_eq!(err.to_string(), format!("invalid agent name {name:?}: {reason}"));
    }
    for name in ["a", "code-review_2", "abcdefghijklmnopqrstuvwxyz-0123456789_ab"] {
        scaffold(name, None).unwrap();
    }
}
