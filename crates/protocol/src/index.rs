use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ErrorCode;

macro_rules! symbol_kinds {
    ($( $(#[$doc:meta])* $variant:ident = $text:literal, )*) => {
        /// What a definition is. The text form is what `--kind` accepts and what JSON shows.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
        #[non_exhaustive]
        pub enum SymbolKind {
            $( $(#[$doc])* #[serde(rename = $text)] $variant, )*
        }

        impl SymbolKind {
            pub const ALL: &'static [SymbolKind] = &[$(SymbolKind::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self { $(SymbolKind::$variant => $text,)* }
            }

            /// Parses the text form (`"function"`, `"type_alias"`, ...).
            pub fn parse(s: &str) -> Option<SymbolKind> {
                match s { $($text => Some(SymbolKind::$variant),)* _ => None }
            }
        }
    };
}

symbol_kinds! {
    Function = "function",
    /// A function inside a class, struct, impl, trait or interface (constructors too).
    Method = "method",
    Class = "class",
    Struct = "struct",
    Union = "union",
    Enum = "enum",
    Trait = "trait",
    Interface = "interface",
    Record = "record",
    /// A Rust `mod`, a Python/JS module object, a Java package.
    Module = "module",
    /// A C++/C# namespace.
    Namespace = "namespace",
    Constant = "constant",
    TypeAlias = "type_alias",
    /// A C#/TS property with accessors.
    Property = "property",
    /// A macro definition (Rust `macro_rules!`, C function-like `#define`).
    Macro = "macro",
}

impl SymbolKind {
    /// Kinds that hold other definitions: their bodies stay in a skeleton.
    pub fn is_container(self) -> bool {
        matches!(
            self,
            SymbolKind::Class
                | SymbolKind::Struct
                | SymbolKind::Union
                | SymbolKind::Enum
                | SymbolKind::Trait
                | SymbolKind::Interface
                | SymbolKind::Record
                | SymbolKind::Module
                | SymbolKind::Namespace
        )
    }

    /// Functions and methods: callable, with a body a skeleton elides.
    pub fn is_callable(self) -> bool {
        matches!(self, SymbolKind::Function | SymbolKind::Method | SymbolKind::Macro)
    }

    /// Types that describe data (fields, variants, members): the first lines of
    /// their bodies are shown in skeletons and repository maps, where a class's or
    /// a trait's body (code) is not. A property is a member, not a type: its
    /// accessors are code.
    pub fn is_data_type(self) -> bool {
        matches!(
            self,
            SymbolKind::Struct
                | SymbolKind::Union
                | SymbolKind::Enum
                | SymbolKind::Interface
                | SymbolKind::Record
                | SymbolKind::TypeAlias
        )
    }
}

impl std::fmt::Display for SymbolKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One definition, as every driver shows it. Lines are 1-based and inclusive; bytes
/// are a half-open range into the file as it was indexed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Symbol {
    /// Relative to the project root, `/`-separated.
    pub path: String,
    pub name: String,
    /// The container path inside the file joined with `.` (`Router.add_route`),
    /// `::` for Rust and C++ (`http::Client::send`).
    pub qualified_name: String,
    pub kind: SymbolKind,
    pub language: String,
    /// First line of the definition (decorators and attributes included).
    pub line: u32,
    pub end_line: u32,
    /// The line of the name itself: where an editor puts the cursor.
    pub name_line: u32,
    pub start_byte: u32,
    pub end_byte: u32,
    /// The declaration up to (not including) its body, whitespace collapsed.
    pub signature: String,
    /// The first line of the doc comment or docstring, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
}

/// A file the indexer did not index, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileSkip {
    pub path: String,
    pub code: ErrorCode,
    pub reason: String,
}

/// Per-language counts in [`IndexStats`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LanguageStats {
    pub language: String,
    pub files: u64,
    pub symbols: u64,
    pub lines: u64,
    /// Files in this language that parsed with syntax errors.
    pub files_with_errors: u64,
}
/// What an index run did, or what the index holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct IndexStats {
    pub files: u64,
    pub symbols: u64,
    pub references: u64,
    pub imports: u64,
    pub languages: Vec<LanguageStats>,
    pub skipped: Vec<FileSkip>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_text_roundtrips() {
        for k in SymbolKind::ALL {
            assert_eq!(SymbolKind::parse(k.as_str()), Some(*k));
            assert_eq!(serde_json::to_string(k).unwrap(), format!("\"{}\"", k.as_str()));
        }
        assert_eq!(SymbolKind::parse("nope"), None);
    }

    #[test]
    fn kind_classes() {
        // (kind, container, callable, data type), every kind. `property` was a
        // data type for skeletons (code-index) and not for repository maps
        // (retrieval); it is none.
        use SymbolKind as K;
        let table = [
            (K::Function, false, true, false),
            (K::Method, false, true, false),
            (K::Class, true, false, false),
            (K::Struct, true, false, true),
            (K::Union, true, false, true),
            (K::Enum, true, false, true),
            (K::Trait, true, false, false),
            (K::Interface, true, false, true),
            (K::Record, true, false, true),
            (K::Module, true, false, false),
            (K::Namespace, true, false, false),
            (K::Constant, false, false, false),
            (K::TypeAlias, false, false, true),
            (K::Property, false, false, false),
            (K::Macro, false, true, false),
        ];
        assert_eq!(table.len(), SymbolKind::ALL.len(), "every kind has a row");
        for (k, container, callable, data) in table {
            assert_eq!(
                (k.is_container(), k.is_callable(), k.is_data_type()),
                (container, callable, data),
                "{k}"
            );
        }
    }
}
