//! The path jail: every path a request names is resolved to a real path inside the
//! project root, or refused.
//!
//! A path is normalized lexically first (`a/./b/../c` → `a/c`; climbing above the
//! root is refused), then walked component by component from the canonical root:
//! a symlink anywhere on the way is resolved and must land inside the root. The
//! operation then works on the resolved real path, never on the user's spelling,
//! so no later lookup can be redirected. `.git` and `.ironbees` (anywhere) are
//! refused: they belong to git and to ironbees itself.

use std::{
    io,
    path::{Component, Path, PathBuf},
};

use crate::error::Error;

/// Directory names no edit may write into.
const PROTECTED: &[&str] = &[".git", ".ironbees"];

/// What the caller is about to do with the path's last component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Use {
    /// Read or replace the content: a final symlink inside the root is followed (the
    /// edit goes to its target, as in an editor).
    Content,
    /// Delete or move the file itself: a final symlink is refused, since ironbees
    /// journals regular files only.
    Entry,
}

/// A path inside the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// Relative to the root, `/`-separated, symlinks resolved.
    pub rel: String,
    pub abs: PathBuf,
}

/// Resolves `user` (relative to `root`, or absolute inside it). `root` must be
/// canonical.
pub(crate) fn resolve(root: &Path, user: &str, usage: Use) -> Result<Resolved, Error> {
    let outside = |reason: String| Error::PathOutsideRoot { path: user.to_owned(), reason };
    if user.trim().is_empty() {
        return Err(Error::InvalidArgument { edit: None, message: "empty path".to_owned() });
    }
    if user.contains('\0') {
        return Err(Error::InvalidArgument {
            edit: None,
            message: format!("path {user:?} contains a NUL byte"),
        });
    }
    let p = Path::new(user);
    let rel = if p.is_absolute() {
        let lexical = lexical_absolute(p);
        match lexical.strip_prefix(root) {
            Ok(r) => r.to_owned(),
            Err(_) => match canonical_prefix(&lexical)
                .and_then(|c| c.strip_prefix(root).ok().map(Path::to_owned))
            {
                Some(r) => r,
                None => {
                    return Err(outside(format!("not under the project root {}", root.display())));
                }
            },
        }
    } else {
        p.to_owned()
    };
    let rel = stdx::normalize_rel(&rel)
        .ok_or_else(|| outside("climbs out of the project root with `..`".to_owned()))?;
    if rel.as_os_str().is_empty() {
        return Err(Error::InvalidArgument {
            edit: None,
            message: format!("{user:?} is the project root, not a file"),
        });
    }
    check_protected(user, &rel)?;

    let comps: Vec<_> = rel.components().collect();
    let mut cur = root.to_owned();
    for (i, c) in comps.iter().enumerate() {
        let Component::Normal(name) = c else { continue };
        let next = cur.join(name);
        let last = i + 1 == comps.len();
        match std::fs::symlink_metadata(&next) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // Nothing exists from here on, so nothing can redirect the rest.
                for rest in &comps[i..] {
                    cur.push(rest);
                }
                break;
            }
            Err(e) if e.raw_os_error() == Some(20) || e.kind() == io::ErrorKind::NotADirectory => {
                return Err(Error::InvalidArgument {
                    edit: None,
                    message: format!("{user}: {} is not a directory", stdx::to_slash(&cur)),
                });
            }
            Err(e) => return Err(Error::Io { path: user.to_owned(), source: e }),
            Ok(meta) if meta.file_type().is_symlink() => {
                if last && usage == Use::Entry {
                    return Err(Error::InvalidArgument {
                        edit: None,
                        message: format!(
                            "{user} is a symbolic link; ironbees deletes and moves regular files only"
                        ),
                    });
                }
                let target = match next.canonicalize() {
                    Ok(t) => t,
                    Err(_) => {
                        return Err(Error::InvalidArgument {
                            edit: None,
                            message: format!(
                                "{user}: {} is a dangling symbolic link",
                                stdx::to_slash(next.strip_prefix(root).unwrap_or(&next))
                            ),
                        });
                    }
                };
                let Ok(inside) = target.strip_prefix(root) else {
                    return Err(outside(format!(
                        "the symbolic link {} points to {}",
                        stdx::to_slash(next.strip_prefix(root).unwrap_or(&next)),
                        target.display()
                    )));
                };
                if inside.as_os_str().is_empty() && last {
                    return Err(outside("resolves to the project root itself".to_owned()));
                }
                check_protected(user, inside)?;
                cur = target;
            }
            Ok(_) => cur = next,
        }
    }
    let rel = cur.strip_prefix(root).map_err(|_| outside("resolves outside the root".into()))?;
    check_protected(user, rel)?;
    // Paths travel as UTF-8 (JSON, history); a lossy name would address another file.
    if rel.to_str().is_none() {
        return Err(Error::InvalidArgument {
            edit: None,
            message: format!("{user} resolves to a path that is not valid UTF-8"),
        });
    }
    Ok(Resolved { rel: stdx::to_slash(rel), abs: cur.clone() })
}

fn check_protected(user: &str, rel: &Path) -> Result<(), Error> {
    for c in rel.components() {
        if let Component::Normal(n) = c
            && let Some(name) = PROTECTED.iter().find(|p| n == **p)
        {
            return Err(Error::PathOutsideRoot {
                path: user.to_owned(),
                reason: format!(
                    "is inside {name}/, which belongs to {}; edits there are refused",
                    if *name == ".git" { "git" } else { "ironbees itself" }
                ),
            });
        }
    }
    Ok(())
}

/// `path` with `.` and `..` resolved lexically.
fn lexical_absolute(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// `path` with its directories in canonical form (an absolute path spelled through
/// a symlinked root, like macOS's `/tmp` → `/private/tmp`). The last component is
/// kept as written: whether a final symlink is followed is the walk's decision.
fn canonical_prefix(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?;
    let mut rest = vec![name.to_owned()];
    let mut cur = path.parent()?.to_owned();
    loop {
        if let Ok(c) = cur.canonicalize() {
            let mut out = c;
            for r in rest.iter().rev() {
                out.push(r);
            }
            return Some(out);
        }
        rest.push(cur.file_name()?.to_owned());
        cur = cur.parent()?.to_owned();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A project with every kind of link, and a directory outside it.
    fn setup() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("proj");
        let outside = base.join("outside");
        std::fs::create_dir_all(root.join("sub/deep")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("sub/f.txt"), "f").unwrap();
        std::fs::write(root.join("plain.txt"), "p").unwrap();
        std::fs::write(outside.join("secret.txt"), "s").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::symlink;
            symlink(root.join("sub"), root.join("link_in")).unwrap();
            symlink(&outside, root.join("link_out")).unwrap();
            symlink(root.join("sub/f.txt"), root.join("file_link")).unwrap();
            symlink(outside.join("secret.txt"), root.join("secret_link")).unwrap();
            symlink(root.join("nowhere"), root.join("dangling")).unwrap();
            symlink("..", root.join("sub/up")).unwrap();
            symlink("../..", root.join("sub/escape")).unwrap();
            symlink(root.join(".git"), root.join("gitlink")).unwrap();
            use std::os::unix::ffi::OsStrExt;
            let bad = root.join(std::ffi::OsStr::from_bytes(b"bad\xff"));
            std::fs::create_dir(&bad).unwrap();
            symlink(&bad, root.join("to_bad")).unwrap();
            // The root spelled another way (like macOS's /tmp -> /private/tmp).
            symlink(&root, base.join("alias")).unwrap();
        }
        (tmp, root)
    }

    #[test]
    #[cfg(unix)]
    fn table() {
        let (_tmp, root) = setup();
        let abs_inside = format!("{}/sub/f.txt", root.display());
        let abs_outside = format!("{}/../outside/secret.txt", root.display());
        let base = root.parent().unwrap().display().to_string();
        let alias_plain = format!("{base}/alias/plain.txt");
        let alias_link = format!("{base}/alias/file_link");
        #[rustfmt::skip]
        let cases: &[(&str, Use, &str)] = &[
            ("plain.txt", Use::Content, "ok plain.txt"),
            ("sub/f.txt", Use::Entry, "ok sub/f.txt"),
            ("./sub/../plain.txt", Use::Content, "ok plain.txt"),
            ("new/dir/file.rs", Use::Content, "ok new/dir/file.rs"),
            (&abs_inside, Use::Content, "ok sub/f.txt"),
            (&abs_outside, Use::Content, "PATH_OUTSIDE_ROOT"),
            ("/etc/passwd", Use::Content, "PATH_OUTSIDE_ROOT"),
            (&alias_plain, Use::Entry, "ok plain.txt"),
            (&alias_link, Use::Entry, "INVALID_ARGUMENT"),
            (&alias_link, Use::Content, "ok sub/f.txt"),
            ("../outside/secret.txt", Use::Content, "PATH_OUTSIDE_ROOT"),
            ("sub/../../outside/secret.txt", Use::Content, "PATH_OUTSIDE_ROOT"),
            ("link_in/f.txt", Use::Content, "ok sub/f.txt"),
            ("link_in/new.txt", Use::Content, "ok sub/new.txt"),
            ("link_out/secret.txt", Use::Content, "PATH_OUTSIDE_ROOT"),
            ("link_out/new.txt", Use::Content, "PATH_OUTSIDE_ROOT"),
            ("file_link", Use::Content, "ok sub/f.txt"),
            ("file_link", Use::Entry, "INVALID_ARGUMENT"),
            ("secret_link", Use::Content, "PATH_OUTSIDE_ROOT"),
            ("dangling", Use::Content, "INVALID_ARGUMENT"),
            ("sub/up/plain.txt", Use::Content, "ok plain.txt"),
            ("sub/escape/outside/secret.txt", Use::Content, "PATH_OUTSIDE_ROOT"),
            (".git/config", Use::Content, "PATH_OUTSIDE_ROOT"),
            ("sub/.git/x", Use::Content, "PATH_OUTSIDE_ROOT"),
            (".ironbees/edits/history.db", Use::Content, "PATH_OUTSIDE_ROOT"),
            ("gitlink/config", Use::Content, "PATH_OUTSIDE_ROOT"),
            ("plain.txt/child", Use::Content, "INVALID_ARGUMENT"),
            ("", Use::Content, "INVALID_ARGUMENT"),
            (".", Use::Content, "INVALID_ARGUMENT"),
            ("a\0b", Use::Content, "INVALID_ARGUMENT"),
            ("to_bad/x.txt", Use::Content, "INVALID_ARGUMENT"),
        ];
        let mut failures = Vec::new();
        for (path, usage, want) in cases {
            let got = match resolve(&root, path, *usage) {
                Ok(r) => {
                    assert_eq!(r.abs, root.join(&r.rel));
                    format!("ok {}", r.rel)
                }
                Err(e) => e.code().as_str().to_owned(),
            };
            if got != *want {
                failures.push(format!("{path:?} {usage:?}: expected {want}, got {got}"));
            }
        }
        assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    }
}
