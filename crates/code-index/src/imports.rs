//! What an import statement binds, read from its text: the names a file can use
//! after it. Extraction types receivers through them (`import os`, `import * as fs
//! from 'fs'`) and import resolution links them to the files that define them.

use crate::lang::Language;

/// The names `text` (one import statement as written) binds, as (imported name,
/// local name): `import a.b as c` → (a.b, c); `from m import x as y` → (x, y);
/// JS/TS default (`default`), named and namespace (`*`) imports; the leaves of a Rust
/// `use` tree. Other languages bind nothing this way.
pub fn import_names(language: Language, text: &str) -> Vec<(String, String)> {
    match language {
        Language::Python => python_import_names(text),
        Language::JavaScript | Language::TypeScript | Language::Tsx => js_import_names(text),
        Language::Rust => rust_use_names(text),
        _ => Vec::new(),
    }
}

/// Names a Python import binds: `import a.b as c` → (a.b, c); `from m import x as y` → (x, y).
fn python_import_names(text: &str) -> Vec<(String, String)> {
    let t = text.trim();
    let from = t.starts_with("from ");
    let list = match t.strip_prefix("from ") {
        Some(rest) => match rest.split_once(" import ") {
            Some((_, names)) => names,
            None => return Vec::new(),
        },
        None => t.strip_prefix("import ").unwrap_or(""),
    };
    list.trim_matches(|c: char| c == '(' || c == ')' || c.is_whitespace())
        .split(',')
        .filter_map(|item| {
            let item = item.trim().trim_matches(|c| c == '(' || c == ')').trim();
            if item.is_empty() || item == "*" {
                return None;
            }
            Some(match item.split_once(" as ") {
                Some((n, a)) => (n.trim().to_owned(), a.trim().to_owned()),
                // `import a.b` binds `a`; `from m import x` binds `x`.
                None if from => (item.to_owned(), item.to_owned()),
                None => (item.to_owned(), item.split('.').next().unwrap_or(item).to_owned()),
            })
        })
        .collect()
}

/// Names a JS/TS import binds: default, named (`{a, b as c}`), namespace (`* as ns`).
fn js_import_names(text: &str) -> Vec<(String, String)> {
    let t = text.trim();
    let Some(rest) = t.strip_prefix("import ").or_else(|| t.strip_prefix("export ")) else {
        return Vec::new();
    };
    let rest = rest.trim_start_matches("type ");
    let clause = rest.split(" from ").next().unwrap_or("");
    let mut out = Vec::new();
    let mut outside = String::new();
    let mut inside = String::new();
    let mut depth = 0;
    for c in clause.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ if depth > 0 => inside.push(c),
            _ => outside.push(c),
        }
    }
    for item in inside.split(',') {
        let item = item.trim().trim_start_matches("type ").trim();
        if item.is_empty() {
            continue;
        }
        out.push(match item.split_once(" as ") {
            Some((n, a)) => (n.trim().to_owned(), a.trim().to_owned()),
            None => (item.to_owned(), item.to_owned()),
        });
    }
    for item in outside.split(',') {
        let item = item.trim();
        if let Some(ns) = item.strip_prefix("* as ") {
            out.push(("*".to_owned(), ns.trim().to_owned()));
        } else if !item.is_empty()
            && item != "*"
            && item.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        {
            out.push(("default".to_owned(), item.to_owned()));
        }
    }
    out
}

/// Names a Rust `use` binds: the leaves of the use tree, with `as` renames.
fn rust_use_names(text: &str) -> Vec<(String, String)> {
    let t = text.trim().trim_start_matches("pub ").trim_start_matches("pub(crate) ");
    let Some(tree) = t.strip_prefix("use ") else { return Vec::new() };
    let tree = tree.trim_end_matches(';');
    let mut out = Vec::new();
    // Leaves are the segments after the last `::` at each comma/brace boundary.
    let flat: String = tree.chars().map(|c| if c == '{' || c == '}' { ',' } else { c }).collect();
    for item in flat.split(',') {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let (path, alias) = match item.split_once(" as ") {
            Some((p, a)) => (p.trim(), Some(a.trim())),
            None => (item, None),
        };
        let leaf = path.rsplit("::").next().unwrap_or(path).trim();
        if leaf.is_empty() || leaf == "*" || leaf == "self" {
            continue;
        }
        out.push((leaf.to_owned(), alias.unwrap_or(leaf).to_owned()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_lists() {
        assert_eq!(
            import_names(Language::Python, "from a.b import (c, d as e,\n f)"),
            vec![("c".into(), "c".into()), ("d".into(), "e".into()), ("f".into(), "f".into())]
        );
        assert_eq!(
            import_names(Language::Python, "import a.b as c, d.e"),
            vec![("a.b".into(), "c".into()), ("d.e".into(), "d".into())]
        );
        assert_eq!(
            import_names(Language::JavaScript, "import Def, { a, b as c } from 'x'"),
            vec![
                ("a".into(), "a".into()),
                ("b".into(), "c".into()),
                ("default".into(), "Def".into())
            ]
        );
        assert_eq!(
            import_names(Language::JavaScript, "import * as ns from 'x'"),
            vec![("*".into(), "ns".into())]
        );
        assert_eq!(
            import_names(Language::Rust, "use a::{b::{C, D as E}, f};"),
            vec![("C".into(), "C".into()), ("D".into(), "E".into()), ("f".into(), "f".into())]
        );
    }
}
