//! The environment a project's commands need, found as a user's shell would: the
//! project's virtualenv (in the project, `VIRTUAL_ENV`, Poetry's, Pipenv's,
//! conda's), `node_modules/.bin`, and where editable installs point.
//!
//! A user runs `pytest` from a shell where the project's environment is active;
//! the sandbox's runner has no shell, so it finds that environment the way the
//! tools that made it would, and runs the tests with its interpreter, its `bin/`
//! first on `PATH` and `VIRTUAL_ENV` set, as activation does. Nothing here runs
//! a process: the answers come from files and the environment.
//!
//! **Editable installs and the validation copy.** `pip install -e .` records the
//! project's absolute path in the environment (a `.pth` line, an `.egg-link`, or
//! the `MAPPING` of setuptools' editable finder). An agent run tests a *copy* of
//! the project, elsewhere; those paths still name the original, which does not
//! have the run's change. We map each such path into the copy and put the results
//! first on `PYTHONPATH`: entries there come before `site-packages` and its `.pth`
//! paths on `sys.path`, and before setuptools' finder (appended to
//! `sys.meta_path`, after the path finder), so `import pkg` finds the copy's
//! `pkg`, and a test that starts a new interpreter inherits the variable. We
//! chose this over showing the copy at the project's own path in a mount
//! namespace because it works the same under every sandbox backend (bubblewrap,
//! none) and leaves the user's environment untouched (no `.pth` is rewritten).

use std::path::{Path, PathBuf};

/// What was found, and what a command gets from it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolEnv {
    /// How it was found, for reports: `.venv`, `VIRTUAL_ENV`, `poetry`,
    /// `pipenv`, `conda`, `node_modules/.bin`.
    pub source: String,
    /// The environment's root (a virtualenv or conda prefix).
    pub prefix: Option<PathBuf>,
    /// Directories put first on `PATH`.
    pub path_dirs: Vec<PathBuf>,
    /// The interpreter that runs Python tests (None: `python3` from `PATH`).
    pub python: Option<PathBuf>,
    /// Variables set (`VIRTUAL_ENV`, `CONDA_PREFIX`).
    pub vars: Vec<(String, String)>,
}

fn var<'a>(env: &'a [(String, String)], name: &str) -> Option<&'a str> {
    env.iter().find(|(k, v)| k == name && !v.is_empty()).map(|(_, v)| v.as_str())
}

/// A virtualenv (or conda prefix) at `dir`: its interpreter, when it has one.
fn interpreter(dir: &Path) -> Option<PathBuf> {
    ["bin/python", "bin/python3"].iter().map(|b| dir.join(b)).find(|p| p.exists())
}

fn venv(dir: &Path, source: &str, var_name: &str) -> Option<ToolEnv> {
    let python = interpreter(dir)?;
    Some(ToolEnv {
        source: source.to_owned(),
        prefix: Some(dir.to_owned()),
        path_dirs: vec![dir.join("bin")],
        python: Some(python),
        vars: vec![(var_name.to_owned(), dir.display().to_string())],
    })
}

/// The Python environment of the project at `origin` (the user's project; the
/// tests may run in a copy of it at another path), found in this order: a
/// virtualenv in the project (`.venv`, `venv`: plain, uv, Poetry in-project),
/// the shell's active one (`VIRTUAL_ENV`), Poetry's and Pipenv's own
/// directories for this project, then conda's active prefix (`CONDA_PREFIX`).
pub fn python_env(origin: &Path, env: &[(String, String)]) -> Option<ToolEnv> {
    for name in [".venv", "venv"] {
        if let Some(e) = venv(&origin.join(name), name, "VIRTUAL_ENV") {
            return Some(e);
        }
    }
    if let Some(e) =
        var(env, "VIRTUAL_ENV").and_then(|v| venv(Path::new(v), "VIRTUAL_ENV", "VIRTUAL_ENV"))
    {
        return Some(e);
    }
    if let Some(e) = poetry_env(origin, env) {
        return Some(e);
    }
    if let Some(e) = pipenv_env(origin, env) {
        return Some(e);
    }
    var(env, "CONDA_PREFIX").and_then(|p| venv(Path::new(p), "conda", "CONDA_PREFIX"))
}

fn home(env: &[(String, String)]) -> Option<PathBuf> {
    var(env, "HOME").map(PathBuf::from)
}

/// Poetry keeps a project's environment (when not in the project) in its
/// virtualenvs directory, named `<name>-<hash>-py<version>`: the project's
/// name with unsafe characters replaced, cut to 42 characters, and the first 8
/// characters of the URL-safe base64 of the SHA-256 of the project's path.
fn poetry_env(origin: &Path, env: &[(String, String)]) -> Option<ToolEnv> {
    let pyproject = std::fs::read_to_string(origin.join("pyproject.toml")).ok()?;
    if !pyproject.contains("[tool.poetry") && !origin.join("poetry.lock").exists() {
        return None;
    }
    let name = toml_name(&pyproject)?;
    let dir = match var(env, "POETRY_VIRTUALENVS_PATH") {
        Some(d) => PathBuf::from(d),
        None => match var(env, "XDG_CACHE_HOME") {
            Some(c) => PathBuf::from(c).join("pypoetry/virtualenvs"),
            None => home(env)?.join(".cache/pypoetry/virtualenvs"),
        },
    };
    let sanitized: String = name
        .to_lowercase()
        .chars()
        .map(|c| if " $`!*@\"\\\r\n\t".contains(c) { '_' } else { c })
        .take(42)
        .collect();
    let hash = &base64_url(&stdx::sha256(origin.display().to_string().as_bytes()))[..8];
    let prefix = format!("{sanitized}-{hash}-py");
    let found = std::fs::read_dir(&dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(&prefix)))
        .max()?;
    venv(&found, "poetry", "VIRTUAL_ENV")
}

/// Pipenv's environment for a project: `<dir name>-<hash>` in `WORKON_HOME` (or
/// `~/.local/share/virtualenvs`), the hash the URL-safe base64 of the first six
/// bytes of the SHA-256 of the `Pipfile`'s path.
fn pipenv_env(origin: &Path, env: &[(String, String)]) -> Option<ToolEnv> {
    let pipfile = origin.join("Pipfile");
    if !pipfile.exists() {
        return None;
    }
    let dir = match var(env, "WORKON_HOME") {
        Some(d) => PathBuf::from(d),
        None => home(env)?.join(".local/share/virtualenvs"),
    };
    let name: String = origin
        .file_name()?
        .to_str()?
        .chars()
        .map(|c| if " &$`!*@\"()[]\\\r\n\t".contains(c) { '_' } else { c })
        .take(42)
        .collect();
    let digest = stdx::sha256(pipfile.display().to_string().as_bytes());
    let hash = base64_url(&digest[..6]);
    venv(&dir.join(format!("{name}-{hash}")), "pipenv", "VIRTUAL_ENV")
}

/// `name = "..."` of `[project]` or `[tool.poetry]` (a line scan: no TOML parser
/// for one string).
fn toml_name(text: &str) -> Option<String> {
    let mut section = "";
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line;
            continue;
        }
        if (section == "[project]" || section == "[tool.poetry]")
            && let Some(rest) = line.strip_prefix("name")
            && let Some(value) = rest.trim_start().strip_prefix('=')
        {
            return Some(value.trim().trim_matches(|c| c == '"' || c == '\'').to_owned());
        }
    }
    None
}

/// URL-safe base64 with padding, as Python's `base64.urlsafe_b64encode`.
fn base64_url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> shift) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The `site-packages` directories of an environment's prefix.
fn site_packages(prefix: &Path) -> Vec<PathBuf> {
    let Ok(lib) = std::fs::read_dir(prefix.join("lib")) else { return Vec::new() };
    let mut out: Vec<PathBuf> = lib
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.starts_with("python")))
        .map(|e| e.path().join("site-packages"))
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

/// Where the environment's editable installs point inside `origin`, mapped to
/// the same places in `workspace` (the copy the tests run in): the directories
/// to put first on `PYTHONPATH`. Empty when the tests run in the project itself.
pub fn editable_paths(prefix: &Path, origin: &Path, workspace: &Path) -> Vec<PathBuf> {
    if origin == workspace {
        return Vec::new();
    }
    let mut found: Vec<PathBuf> = Vec::new();
    let mut add = |p: &Path| {
        if let Ok(rel) = p.strip_prefix(origin) {
            let mapped = workspace.join(rel);
            if mapped.is_dir() && !found.contains(&mapped) {
                found.push(mapped);
            }
        }
    };
    for dir in site_packages(prefix) {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        files.sort();
        for file in files {
            let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
            let Ok(text) = std::fs::read_to_string(&file) else { continue };
            if name.ends_with(".pth") {
                // Path lines (not `import` lines) name directories put on sys.path.
                for line in text.lines().map(str::trim) {
                    if line.starts_with('/') {
                        add(Path::new(line));
                    }
                }
            } else if name.ends_with(".egg-link") {
                if let Some(first) = text.lines().next() {
                    add(Path::new(first.trim()));
                }
            } else if name.starts_with("__editable___") && name.ends_with("_finder.py") {
                // MAPPING = {'pkg': '/origin/src/pkg', ...}: the package's parent
                // directory is what makes `import pkg` find it.
                for quoted in text.split(['\'', '"']).filter(|s| s.starts_with('/')) {
                    if let Some(parent) = Path::new(quoted).parent() {
                        add(parent);
                    }
                }
            }
        }
    }
    found
}

/// `node_modules/.bin` of a Node project, first on `PATH` as `npm run` does.
pub fn node_env(root: &Path) -> Option<ToolEnv> {
    let bin = root.join("node_modules/.bin");
    bin.is_dir().then(|| ToolEnv {
        source: "node_modules/.bin".into(),
        path_dirs: vec![bin],
        ..ToolEnv::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }

    fn vars(pairs: &[(&str, &Path)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.display().to_string())).collect()
    }

    /// Each kind of environment, found where its tool puts it, and the order
    /// between them: the project's own first.
    #[test]
    fn environments_are_found_where_their_tools_put_them() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        // The hashes are Python's: for "/home/u/proj",
        // base64.urlsafe_b64encode(sha256(path).digest())[:8] (Poetry) and
        // base64.urlsafe_b64encode(sha256(path + "/Pipfile").digest()[:6]) (Pipenv).
        let proj = Path::new("/home/u/proj");
        let poetry_venv = h.join(".cache/pypoetry/virtualenvs/my-app-nAn4BVom-py3.11");
        touch(&poetry_venv.join("bin/python"));
        let pipenv_venv = h.join(".local/share/virtualenvs/proj-kl-QKK3C");
        touch(&pipenv_venv.join("bin/python"));
        let active = h.join("active-venv");
        touch(&active.join("bin/python3"));
        let conda = h.join("miniconda/envs/x");
        touch(&conda.join("bin/python"));

        // Poetry and Pipenv look at the project's files, which live elsewhere
        // here: their search is checked through a project directory made up.
        let project = tempfile::tempdir().unwrap();
        let p = project.path();
        let found = |env: &[(String, String)]| python_env(p, env).map(|e| e.source);
        assert_eq!(found(&[]), None);
        assert_eq!(found(&vars(&[("CONDA_PREFIX", &conda)])).as_deref(), Some("conda"));
        assert_eq!(
            found(&vars(&[("CONDA_PREFIX", &conda), ("VIRTUAL_ENV", &active)])).as_deref(),
            Some("VIRTUAL_ENV"),
            "an activated virtualenv wins over conda's base"
        );
        touch(&p.join("venv/bin/python"));
        assert_eq!(found(&vars(&[("VIRTUAL_ENV", &active)])).as_deref(), Some("venv"));
        touch(&p.join(".venv/bin/python"));
        let e = python_env(p, &[]).unwrap();
        assert_eq!(e.source, ".venv");
        assert_eq!(e.python, Some(p.join(".venv/bin/python")));
        assert_eq!(e.path_dirs, [p.join(".venv/bin")]);
        assert_eq!(e.vars, [("VIRTUAL_ENV".to_owned(), p.join(".venv").display().to_string())]);

        // Poetry's and Pipenv's own directories, by the project's path.
        let poetry_dir = h.join(".cache/pypoetry/virtualenvs");
        let hash = &base64_url(&stdx::sha256(proj.display().to_string().as_bytes()))[..8];
        assert_eq!(hash, "nAn4BVom");
        assert!(poetry_dir.join(format!("my-app-{hash}-py3.11")).is_dir());
        let pipenv_hash =
            base64_url(&stdx::sha256(proj.join("Pipfile").display().to_string().as_bytes())[..6]);
        assert_eq!(pipenv_hash, "kl-QKK3C");
    }

    #[test]
    fn poetry_and_pipenv_environments_of_a_real_project_path() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let p = project.path();
        let env = vars(&[("HOME", home.path())]);
        std::fs::write(p.join("pyproject.toml"), "[tool.poetry]\nname = \"My App\"\n").unwrap();
        let hash = &base64_url(&stdx::sha256(p.display().to_string().as_bytes()))[..8];
        let venv = home.path().join(format!(".cache/pypoetry/virtualenvs/my_app-{hash}-py3.11"));
        touch(&venv.join("bin/python"));
        let e = python_env(p, &env).unwrap();
        assert_eq!((e.source.as_str(), e.prefix), ("poetry", Some(venv)));

        let project = tempfile::tempdir().unwrap();
        let p = project.path();
        std::fs::write(p.join("Pipfile"), "[packages]\n").unwrap();
        let name = p.file_name().unwrap().to_str().unwrap();
        let hash =
            base64_url(&stdx::sha256(p.join("Pipfile").display().to_string().as_bytes())[..6]);
        let venv = home.path().join(format!(".local/share/virtualenvs/{name}-{hash}"));
        touch(&venv.join("bin/python"));
        let e = python_env(p, &env).unwrap();
        assert_eq!((e.source.as_str(), e.prefix), ("pipenv", Some(venv)));
    }

    /// `pip install -e .` leaves the project's path in `.pth` files, an
    /// `.egg-link`, or setuptools' editable finder; each is mapped into the copy.
    #[test]
    fn editable_installs_point_at_the_copy() {
        let origin = tempfile::tempdir().unwrap();
        let copy = tempfile::tempdir().unwrap();
        let (o, c) = (origin.path(), copy.path());
        for dir in ["src", "flat", "legacy"] {
            std::fs::create_dir_all(c.join(dir)).unwrap();
        }
        std::fs::create_dir_all(c.join("finder/pkg")).unwrap();
        let venv = tempfile::tempdir().unwrap();
        let site = venv.path().join("lib/python3.11/site-packages");
        std::fs::create_dir_all(&site).unwrap();
        let w = |name: &str, text: String| std::fs::write(site.join(name), text).unwrap();
        w("__editable__.app-1.0.pth", format!("{}\n", o.join("src").display()));
        w("_flat.pth", format!("import x\n{}\n/elsewhere/lib\n", o.join("flat").display()));
        w("legacy.egg-link", format!("{}\n.\n", o.join("legacy").display()));
        w(
            "__editable___pkg_1_0_finder.py",
            format!("MAPPING = {{'pkg': '{}'}}\n", o.join("finder/pkg").display()),
        );
        let got = editable_paths(venv.path(), o, c);
        let want: Vec<PathBuf> =
            ["src", "legacy", "finder", "flat"].iter().map(|d| c.join(d)).collect();
        let mut got_sorted = got.clone();
        got_sorted.sort();
        let mut want_sorted = want;
        want_sorted.sort();
        assert_eq!(got_sorted, want_sorted);
        assert!(editable_paths(venv.path(), o, o).is_empty(), "no copy, nothing to map");
    }

    #[test]
    fn base64_matches_python() {
        // base64.urlsafe_b64encode(b"\xfb\xff\xbf") == b"-_-_"
        assert_eq!(base64_url(&[0xfb, 0xff, 0xbf]), "-_-_");
        assert_eq!(base64_url(b"ab"), "YWI=");
        assert_eq!(base64_url(b"abc"), "YWJj");
    }

    #[test]
    fn names_from_pyproject() {
        let cases = [
            ("[project]\nname = \"flask\"\n", Some("flask")),
            ("[tool.poetry]\nname='my-app'\nversion='1'\n", Some("my-app")),
            ("[build-system]\nname = \"x\"\n", None),
        ];
        for (text, want) in cases {
            assert_eq!(toml_name(text).as_deref(), want, "{text}");
        }
    }
}
