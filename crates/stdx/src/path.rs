use std::path::{Component, Path, PathBuf};

/// Shows a path with `/` separators whatever the platform, as every ironbees output does.
pub fn to_slash(path: &Path) -> String {
    let s = path.to_string_lossy();
    if std::path::MAIN_SEPARATOR == '/' { s.into_owned() } else { s.replace('\\', "/") }
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
    fn normalize() {
        let n = |s: &str| normalize_rel(Path::new(s)).map(|p| to_slash(&p));
        assert_eq!(n("a/./b/../c"), Some("a/c".to_owned()));
        assert_eq!(n("../x"), None);
        assert_eq!(n("a/../../x"), None);
        assert_eq!(n("/etc/passwd"), None);
        assert_eq!(n(""), Some(String::new()));
    }
}
