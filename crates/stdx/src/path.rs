use std::path::{Component, Path, PathBuf};

/// Shows a path with `/` separators whatever the platform, as every ironbees output does.
pub fn to_slash(path: &Path) -> String {
    let s = path.to_string_lossy();
    if std::path::MAIN_SEPARATOR == '/' { s.into_owned() } else { s.replace('\\', "/") }
}

/// Whether the `/`-separated relative `path` is `dir` or lies under it; every
/// path lies under the root (`""`). `dir/` and `dir` are the same directory, and
/// `shop` does not contain `shopping/cart.py`.
pub fn is_within(path: &str, dir: &str) -> bool {
    let dir = dir.trim_end_matches('/');
    dir.is_empty()
        || path.strip_prefix(dir).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Lexically normalizes a relative path: drops `.`, resolves `..` against earlier
/// components. Returns `None` when the path is absolute or climbs above its start
/// (the caller is about to leave the project root).
pub fn normalize_rel(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::Normal(p) => out.push(p),
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within() {
        for (path, dir, expected) in [
            ("shop/cart.py", "shop", true),
            ("shop/cart.py", "shop/", true),
            ("shop/cart.py", "", true),
            ("shop", "shop", true),
            ("shop/a/b.py", "shop/a", true),
            ("shopping/cart.py", "shop", false),
            ("shop.py", "shop", false),
            ("docs/shop/x.md", "shop", false),
        ] {
            assert_eq!(is_within(path, dir), expected, "{path} in {dir:?}");
        }
    }

    #[test]
    fn normalize() {
        let n = |s: &str| normalize_rel(Path::new(s)).map(|p| to_slash(&p));
        assert_eq!(n("a/./b/../c"), Some("a/c".to_owned()));
        assert_eq!(n("../x"), None);
        assert_eq!(n("a/../../x"), None);
        assert_eq!(n("/etc/passwd"), None);
        assert_eq!(n(""), Some(String::new()));
    }
}
