//! The languages we parse: file extensions, grammars and query files.
//!
//! One `.scm` query file per language under `queries/` (the TypeScript and TSX queries
//! are the JavaScript one followed by `typescript.scm`, because the TypeScript grammar
//! extends the JavaScript one).

use std::path::Path;

use serde::{Deserialize, Serialize};

/// A language ironbees indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Rust,
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Java,
    CSharp,
    C,
    Cpp,
}

impl Language {
    pub const ALL: [Language; 10] = [
        Language::Rust,
        Language::Python,
        Language::JavaScript,
        Language::TypeScript,
        Language::Tsx,
        Language::Go,
        Language::Java,
        Language::CSharp,
        Language::C,
        Language::Cpp,
    ];

    /// The name used in the index, `--json` output and `status`.
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Python => "python",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::Go => "go",
            Language::Java => "java",
            Language::CSharp => "csharp",
            Language::C => "c",
            Language::Cpp => "cpp",
        }
    }

    /// JavaScript, TypeScript and TSX: the languages that ship minified bundles.
    pub(crate) fn is_javascript_family(self) -> bool {
        matches!(self, Language::JavaScript | Language::TypeScript | Language::Tsx)
    }

    /// Whether code in `self` can call or name a definition written in `other`
    /// without a foreign-function layer: JavaScript with TypeScript, C with C++.
    pub fn links_with(self, other: Language) -> bool {
        let family = |l: Language| match l {
            Language::JavaScript | Language::TypeScript | Language::Tsx => Language::JavaScript,
            Language::C | Language::Cpp => Language::C,
            l => l,
        };
        family(self) == family(other)
    }

    pub fn from_name(name: &str) -> Option<Language> {
        Language::ALL.into_iter().find(|l| l.name() == name)
    }

    /// Picks the language from the file name. `.h` is parsed as C++: the C++ grammar
    /// reads C headers well, and the reverse is not true.
    pub fn from_path(path: &Path) -> Option<Language> {
        let ext = path.extension()?.to_str()?;
        let lang = match ext {
            "rs" => Language::Rust,
            "py" | "pyi" => Language::Python,
            "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "go" => Language::Go,
            "java" => Language::Java,
            "cs" => Language::CSharp,
            "c" => Language::C,
            "h" | "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" | "ipp" | "tpp"
            | "inl" => Language::Cpp,
            _ => return None,
        };
        Some(lang)
    }

    /// Separator between containers in qualified names (`a::b` or `a.b`).
    pub fn qualifier_separator(self) -> &'static str {
        match self {
            Language::Rust | Language::Cpp => "::",
            _ => ".",
        }
    }

    pub(crate) fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Language::Go => tree_sitter_go::LANGUAGE.into(),
            Language::Java => tree_sitter_java::LANGUAGE.into(),
            Language::CSharp => tree_sitter_c_sharp::LANGUAGE.into(),
            Language::C => tree_sitter_c::LANGUAGE.into(),
            Language::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        }
    }

    pub(crate) fn query_source(self) -> String {
        const JS: &str = include_str!("../queries/javascript.scm");
        match self {
            Language::Rust => include_str!("../queries/rust.scm").to_owned(),
            Language::Python => include_str!("../queries/python.scm").to_owned(),
            Language::JavaScript => JS.to_owned(),
            Language::TypeScript | Language::Tsx => {
                let shared = JS.split("; ---- JavaScript only").next().unwrap_or(JS);
                format!("{shared}\n{}", include_str!("../queries/typescript.scm"))
            }
            Language::Go => include_str!("../queries/go.scm").to_owned(),
            Language::Java => include_str!("../queries/java.scm").to_owned(),
            Language::CSharp => include_str!("../queries/c_sharp.scm").to_owned(),
            Language::C => include_str!("../queries/c.scm").to_owned(),
            Language::Cpp => include_str!("../queries/cpp.scm").to_owned(),
        }
    }
}

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
