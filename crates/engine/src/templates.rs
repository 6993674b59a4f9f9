//! Built-in templates for `write` and name-case substitution for scaffolding from
//! an existing file. Pure.

use std::collections::BTreeMap;

use code_index::Language;

/// The names of the built-in templates.
pub(crate) const NAMES: &[&str] = &["module", "test", "class"];

/// The template text for `name` in `lang`, with `{{name}}` (snake), `{{Name}}`
/// (Pascal), `{{NAME}}` placeholders.
fn template(lang: Language, name: &str) -> Option<&'static str> {
    use Language as L;
    Some(match (lang, name) {
        (L::Python, "module") => {
            "\"\"\"{{name}}.\"\"\"\n\n\ndef {{name}}():\n    \"\"\"TODO: describe {{name}}.\"\"\"\n    raise NotImplementedError\n"
        }
        (L::Python, "class") => {
            "\"\"\"{{Name}}.\"\"\"\n\n\nclass {{Name}}:\n    \"\"\"TODO: describe {{Name}}.\"\"\"\n\n    def __init__(self):\n        pass\n"
        }
        (L::Python, "test") => {
            "import pytest\n\n\ndef test_{{name}}():\n    assert True  # TODO: test {{name}}\n"
        }
        (L::Rust, "module") => "//! {{Name}}.\n\npub fn {{name}}() {\n    todo!(\"{{name}}\")\n}\n",
        (L::Rust, "class") => {
            "/// {{Name}}.\n#[derive(Debug, Default)]\npub struct {{Name}} {}\n\nimpl {{Name}} {\n    pub fn new() -> Self {\n        Self::default()\n    }\n}\n"
        }
        (L::Rust, "test") => "#[test]\nfn {{name}}() {\n    // TODO: test {{name}}\n}\n",
        (L::Go, "module") => {
            "package {{package}}\n\n// {{Name}} TODO: describe.\nfunc {{Name}}() {\n}\n"
        }
        (L::Go, "class") => {
            "package {{package}}\n\n// {{Name}} TODO: describe.\ntype {{Name}} struct {\n}\n\n// New{{Name}} creates a {{Name}}.\nfunc New{{Name}}() *{{Name}} {\n\treturn &{{Name}}{}\n}\n"
        }
        (L::Go, "test") => {
            "package {{package}}\n\nimport \"testing\"\n\nfunc Test{{Name}}(t *testing.T) {\n\t// TODO: test {{Name}}\n}\n"
        }
        (L::TypeScript | L::Tsx, "module") => {
            "/** {{Name}}. */\nexport function {{camel}}(): void {\n  throw new Error(\"not implemented: {{camel}}\");\n}\n"
        }
        (L::TypeScript | L::Tsx, "class") => {
            "/** {{Name}}. */\nexport class {{Name}} {\n  constructor() {}\n}\n"
        }
        (L::TypeScript | L::Tsx | L::JavaScript, "test") => {
            "describe(\"{{name}}\", () => {\n  it(\"works\", () => {\n    expect(true).toBe(true); // TODO: test {{name}}\n  });\n});\n"
        }
        (L::JavaScript, "module") => {
            "/** {{Name}}. */\nexport function {{camel}}() {\n  throw new Error(\"not implemented: {{camel}}\");\n}\n"
        }
        (L::JavaScript, "class") => {
            "/** {{Name}}. */\nexport class {{Name}} {\n  constructor() {}\n}\n"
        }
        (L::Java, "class" | "module") => {
            "{{package_decl}}/** {{Name}}. */\npublic class {{Name}} {\n    public {{Name}}() {\n    }\n}\n"
        }
        (L::Java, "test") => {
            "{{package_decl}}import org.junit.jupiter.api.Test;\n\nclass {{Name}} {\n    @Test\n    void works() {\n        // TODO\n    }\n}\n"
        }
        (L::CSharp, "class" | "module") => {
            "namespace {{Namespace}};\n\n/// <summary>{{Name}}.</summary>\npublic class {{Name}}\n{\n}\n"
        }
        (L::CSharp, "test") => {
            "using Xunit;\n\nnamespace {{Namespace}};\n\npublic class {{Name}}\n{\n    [Fact]\n    public void Works()\n    {\n    }\n}\n"
        }
        (L::C, "module") => {
            "/* {{name}}. */\n#include \"{{name}}.h\"\n\nvoid {{name}}(void) {\n}\n"
        }
        (L::Cpp, "module" | "class") => {
            "// {{Name}}.\n#pragma once\n\nclass {{Name}} {\npublic:\n    {{Name}}() = default;\n};\n"
        }
        _ => return None,
    })
}

/// Renders a built-in template for `path`.
pub(crate) fn render(
    path: &str,
    template_name: &str,
    vars: &BTreeMap<String, String>,
) -> Result<String, String> {
    let lang = Language::from_path(std::path::Path::new(path))
        .ok_or_else(|| format!("no template language for {path}: give `content` instead"))?;
    let text = template(lang, template_name).ok_or_else(|| {
        let have: Vec<&str> =
            NAMES.iter().copied().filter(|n| template(lang, n).is_some()).collect();
        format!("no `{template_name}` template for {}; available: {}", lang.name(), have.join(", "))
    })?;
    let stem = file_stem(path);
    let base = vars
        .get("name")
        .cloned()
        .unwrap_or_else(|| stem.trim_start_matches("test_").trim_end_matches("_test").to_owned());
    let words = split_words(&base);
    let dir = path.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
    let package = vars.get("package").cloned().unwrap_or_else(|| {
        dir.rsplit('/').next().filter(|s| !s.is_empty()).unwrap_or("main").to_owned()
    });
    let mut all: BTreeMap<String, String> = BTreeMap::new();
    all.insert("name".into(), snake(&words));
    all.insert("Name".into(), pascal(&words));
    all.insert("NAME".into(), snake(&words).to_uppercase());
    all.insert("camel".into(), camel(&words));
    all.insert("package".into(), package.clone());
    all.insert(
        "Namespace".into(),
        vars.get("namespace").cloned().unwrap_or_else(|| pascal(&split_words(&package))),
    );
    let java_pkg = vars
        .get("package")
        .cloned()
        .or_else(|| dir.split_once("java/").map(|(_, p)| p.replace('/', ".")));
    all.insert(
        "package_decl".into(),
        java_pkg.map(|p| format!("package {p};\n\n")).unwrap_or_default(),
    );
    if lang == Language::Java || lang == Language::CSharp {
        all.insert("Name".into(), pascal(&split_words(&stem)));
    }
    for (k, v) in vars {
        all.insert(k.clone(), v.clone());
    }
    Ok(substitute(text, &all))
}

/// Copies `source` (the text of `from_path`) for `to_path`, replacing the source
/// file's name in its case forms with the new one's.
pub(crate) fn scaffold_from(source: &str, from_path: &str, to_path: &str) -> String {
    let old = split_words(&file_stem(from_path));
    let new = split_words(&file_stem(to_path));
    if old.is_empty() || new.is_empty() {
        return source.to_owned();
    }
    let pairs = [
        (pascal(&old), pascal(&new)),
        (snake(&old).to_uppercase(), snake(&new).to_uppercase()),
        (snake(&old), snake(&new)),
        (kebab(&old), kebab(&new)),
        (camel(&old), camel(&new)),
    ];
    // Longest first, so `UserService` is replaced before `user`.
    let mut out = source.to_owned();
    let mut seen = std::collections::HashSet::new();
    for (a, b) in pairs {
        if a.len() > 1 && seen.insert(a.clone()) {
            out = out.replace(&a, &b);
        }
    }
    out
}

fn substitute(text: &str, vars: &BTreeMap<String, String>) -> String {
    let mut out = text.to_owned();
    for (k, v) in vars {
        out = out.replace(&format!("{{{{{k}}}}}"), v);
    }
    out
}

fn file_stem(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.split('.').next().unwrap_or(name).to_owned()
}

/// `userService`, `UserService`, `user_service`, `user-service` → [user, service].
fn split_words(s: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' || c == '-' || c == ' ' || c == '.' {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            continue;
        }
        let boundary = c.is_uppercase()
            && i > 0
            && (chars[i - 1].is_lowercase()
                || chars[i - 1].is_ascii_digit()
                || chars.get(i + 1).is_some_and(|n| n.is_lowercase())
                    && chars[i - 1].is_uppercase());
        if boundary && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

fn cap(w: &str) -> String {
    let mut c = w.chars();
    c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
}

fn snake(w: &[String]) -> String {
    w.join("_")
}

fn kebab(w: &[String]) -> String {
    w.join("-")
}

fn pascal(w: &[String]) -> String {
    w.iter().map(|x| cap(x)).collect()
}

fn camel(w: &[String]) -> String {
    let p = pascal(w);
    let mut c = p.chars();
    c.next().map(|f| f.to_lowercase().collect::<String>() + c.as_str()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_cases() {
        for (input, snake_, pascal_, camel_) in [
            ("user_service", "user_service", "UserService", "userService"),
            ("UserService", "user_service", "UserService", "userService"),
            ("HTTPServer", "http_server", "HttpServer", "httpServer"),
            ("order-item", "order_item", "OrderItem", "orderItem"),
        ] {
            let w = split_words(input);
            assert_eq!(
                (snake(&w), pascal(&w), camel(&w)),
                (snake_.into(), pascal_.into(), camel_.into()),
                "{input}"
            );
        }
    }

    #[test]
    fn templates_render_per_language() {
        let v = BTreeMap::new();
        let py = render("app/order_item.py", "class", &v).unwrap();
        assert!(py.contains("class OrderItem:"), "{py}");
        let test = render("tests/test_orders.py", "test", &v).unwrap();
        assert!(test.contains("def test_orders():"), "{test}");
        let go = render("pkg/store/cache.go", "module", &v).unwrap();
        assert!(go.starts_with("package store\n") && go.contains("func Cache()"), "{go}");
        let rs = render("src/user_repo.rs", "class", &v).unwrap();
        assert!(rs.contains("pub struct UserRepo {}"), "{rs}");
        let java = render("src/main/java/com/acme/Billing.java", "class", &v).unwrap();
        assert!(
            java.starts_with("package com.acme;") && java.contains("public class Billing"),
            "{java}"
        );
        let mut named = BTreeMap::new();
        named.insert("name".to_owned(), "parse config".to_owned());
        assert!(
            render("x.ts", "module", &named).unwrap().contains("export function parseConfig()")
        );
        assert!(render("x.txt", "module", &v).unwrap_err().contains("no template language"));
        assert!(render("x.c", "test", &v).unwrap_err().contains("available: module"));
    }

    #[test]
    fn scaffold_replaces_every_case_form() {
        let src = "class UserService:\n    TABLE = 'USER_SERVICE'\n    def user_service_id(self): return 'user-service'\n";
        let out = scaffold_from(src, "app/user_service.py", "app/order_service.py");
        assert_eq!(
            out,
            "class OrderService:\n    TABLE = 'ORDER_SERVICE'\n    def order_service_id(self): return 'order-service'\n"
        );
    }
}
