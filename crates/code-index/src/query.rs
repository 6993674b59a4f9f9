//! Read-side queries over the store: symbols, status, file lookups.

use std::collections::BTreeMap;

use protocol::{ErrorCode, FileSkip, LanguageStats, Symbol, SymbolKind};
use rusqlite::params_from_iter;
use serde::Serialize;

use crate::{
    error::{Error, Result},
    store::Store,
};
pub use protocol::{IndexStatus as Status, ParseProblem, SkipGroup, Staleness};

/// Which symbols to list. Empty fields match everything.
#[derive(Debug, Clone, Default)]
pub struct SymbolQuery {
    /// A glob (`*`, `?`, `[...]`) matched against the name, or against the qualified
    /// name when it contains `.` or `::`. Without glob characters: an exact match.
    pub name: Option<String>,
    pub kind: Option<SymbolKind>,
    /// A path relative to the root, a directory (`src/`), or a glob.
    pub file: Option<String>,
    pub ignore_case: bool,
    pub limit: Option<usize>,
}

/// One use of a name somewhere in the project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReferenceHit {
    pub path: String,
    pub line: u32,
    pub column: u32,
    pub kind: crate::extract::RefKind,
    /// Qualified name of the innermost definition containing the use.
    pub enclosing: Option<String>,
}

pub(crate) fn references(store: &Store, name: &str) -> Result<Vec<ReferenceHit>> {
    let conn = store.conn();
    let err = |e| Error::db(store.path(), e);
    let mut stmt = conn
        .prepare(
            "SELECT f.path, b.id, b.refs FROM ref_names rn JOIN blobs b ON b.id = rn.blob_id
             JOIN files f ON f.blob_id = b.id WHERE rn.name = ?1 ORDER BY f.path",
        )
        .map_err(err)?;
    let rows = stmt
        .query_map([name], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, Vec<u8>>(2)?))
        })
        .map_err(err)?;
    let mut names_stmt =
        conn.prepare("SELECT ord, qualified_name FROM symbols WHERE blob_id = ?1").map_err(err)?;
    let mut out = Vec::new();
    for row in rows {
        let (path, blob, bytes) = row.map_err(err)?;
        let refs = crate::refcodec::decode(&bytes).ok_or_else(|| Error::Corrupt {
            path: store.path().to_owned(),
            reason: format!("references of {path} cannot be decoded"),
        })?;
        let qualified: std::collections::HashMap<u32, String> = names_stmt
            .query_map([blob], |r| Ok((r.get::<_, u32>(0)?, r.get::<_, String>(1)?)))
            .map_err(err)?
            .collect::<rusqlite::Result<_>>()
            .map_err(err)?;
        out.extend(refs.into_iter().filter(|r| r.name == name).map(|r| ReferenceHit {
            path: path.clone(),
            line: r.line,
            column: r.column,
            kind: r.kind,
            enclosing: r.enclosing.and_then(|e| qualified.get(&e).cloned()),
        }));
    }
    Ok(out)
}

fn glob_meta(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

pub(crate) fn symbols(store: &Store, q: &SymbolQuery) -> Result<Vec<Symbol>> {
    let mut sql = String::from(
        "SELECT f.path, s.name, s.qualified_name, s.kind, b.language, s.line, s.end_line, s.name_line,
                s.start_byte, s.end_byte, s.signature, s.doc
         FROM symbols s JOIN blobs b ON b.id = s.blob_id JOIN files f ON f.blob_id = s.blob_id WHERE 1",
    );
    let mut args: Vec<String> = Vec::new();
    if let Some(name) = &q.name {
        let column =
            if name.contains('.') || name.contains("::") { "s.qualified_name" } else { "s.name" };
        let op = if glob_meta(name) { "GLOB" } else { "=" };
        if q.ignore_case {
            sql.push_str(&format!(" AND lower({column}) {op} lower(?)"));
        } else {
            sql.push_str(&format!(" AND {column} {op} ?"));
        }
        args.push(name.clone());
    }
    if let Some(kind) = q.kind {
        sql.push_str(" AND s.kind = ?");
        args.push(kind.as_str().to_owned());
    }
    if let Some(file) = &q.file {
        if glob_meta(file) {
            sql.push_str(" AND f.path GLOB ?");
            args.push(file.clone());
        } else {
            let dir = format!("{}/*", file.trim_end_matches('/'));
            sql.push_str(" AND (f.path = ? OR f.path GLOB ?)");
            args.push(file.trim_end_matches('/').to_owned());
            args.push(dir);
        }
    }
    sql.push_str(" ORDER BY f.path, s.start_byte, s.ord");
    if let Some(limit) = q.limit {
        sql.push_str(&format!(" LIMIT {limit}"));
    }
    let conn = store.conn();
    let err = |e| Error::db(store.path(), e);
    let mut stmt = conn.prepare(&sql).map_err(err)?;
    let rows = stmt
        .query_map(params_from_iter(args.iter()), |r| {
            let kind: String = r.get(3)?;
            Ok(Symbol {
                path: r.get(0)?,
                name: r.get(1)?,
                qualified_name: r.get(2)?,
                kind: SymbolKind::parse(&kind).unwrap_or(SymbolKind::Function),
                language: r.get(4)?,
                line: r.get(5)?,
                end_line: r.get(6)?,
                name_line: r.get(7)?,
                start_byte: r.get(8)?,
                end_byte: r.get(9)?,
                signature: r.get(10)?,
                doc: r.get(11)?,
            })
        })
        .map_err(err)?;
    rows.collect::<rusqlite::Result<Vec<_>>>().map_err(err)
}

pub(crate) fn counts(store: &Store) -> Result<(u64, u64, u64, u64)> {
    let conn = store.conn();
    let err = |e| Error::db(store.path(), e);
    let one =
        |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0)).map(|n| n as u64).map_err(err);
    Ok((
        one("SELECT count(*) FROM files")?,
        one("SELECT coalesce(sum(b.n_symbols), 0) FROM files f JOIN blobs b ON b.id = f.blob_id")?,
        one("SELECT coalesce(sum(b.n_refs), 0) FROM files f JOIN blobs b ON b.id = f.blob_id")?,
        one("SELECT coalesce(sum(b.n_imports), 0) FROM files f JOIN blobs b ON b.id = f.blob_id")?,
    ))
}

pub(crate) fn languages(store: &Store) -> Result<Vec<LanguageStats>> {
    let conn = store.conn();
    let err = |e| Error::db(store.path(), e);
    let mut stmt = conn
        .prepare(
            "SELECT b.language, count(*), sum(b.lines), sum(b.error_nodes > 0), sum(b.n_symbols)
             FROM files f JOIN blobs b ON b.id = f.blob_id GROUP BY b.language ORDER BY count(*) DESC, b.language",
        )
        .map_err(err)?;
    let rows = stmt
        .query_map([], |r| {
            Ok(LanguageStats {
                language: r.get(0)?,
                files: r.get::<_, i64>(1)? as u64,
                lines: r.get::<_, i64>(2)? as u64,
                files_with_errors: r.get::<_, i64>(3)? as u64,
                symbols: r.get::<_, i64>(4)? as u64,
            })
        })
        .map_err(err)?;
    rows.collect::<rusqlite::Result<_>>().map_err(err)
}

pub(crate) fn skip_groups(store: &Store) -> Result<Vec<SkipGroup>> {
    let conn = store.conn();
    let err = |e| Error::db(store.path(), e);
    let mut stmt =
        conn.prepare("SELECT path, code, reason FROM skipped ORDER BY code, path").map_err(err)?;
    let rows = stmt
        .query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?))
        })
        .map_err(err)?;
    let mut groups: BTreeMap<String, SkipGroup> = BTreeMap::new();
    for row in rows {
        let (path, code_text, reason) = row.map_err(err)?;
        let code = parse_code(&code_text);
        let g = groups.entry(code_text).or_insert_with(|| SkipGroup {
            code,
            count: 0,
            examples: Vec::new(),
        });
        g.count += 1;
        if g.examples.len() < 5 {
            g.examples.push(FileSkip { path, code, reason });
        }
    }
    let mut groups: Vec<SkipGroup> = groups.into_values().collect();
    groups.sort_by_key(|g| std::cmp::Reverse(g.count));
    Ok(groups)
}

pub(crate) fn syntax_errors(store: &Store) -> Result<(u64, Vec<ParseProblem>)> {
    let conn = store.conn();
    let err = |e| Error::db(store.path(), e);
    let total: i64 = conn
        .query_row(
            "SELECT count(*) FROM files f JOIN blobs b ON b.id = f.blob_id WHERE b.error_nodes > 0",
            [],
            |r| r.get(0),
        )
        .map_err(err)?;
    let mut stmt = conn
        .prepare("SELECT f.path, b.error_nodes FROM files f JOIN blobs b ON b.id = f.blob_id WHERE b.error_nodes > 0 ORDER BY b.error_nodes DESC, f.path LIMIT 10")
        .map_err(err)?;
    let rows = stmt
        .query_map([], |r| Ok(ParseProblem { path: r.get(0)?, error_nodes: r.get(1)? }))
        .map_err(err)?;
    Ok((total as u64, rows.collect::<rusqlite::Result<_>>().map_err(err)?))
}

pub(crate) fn lossy_files(store: &Store) -> Result<Vec<String>> {
    let conn = store.conn();
    let err = |e| Error::db(store.path(), e);
    let mut stmt = conn.prepare("SELECT path FROM files WHERE lossy ORDER BY path").map_err(err)?;
    let rows = stmt.query_map([], |r| r.get(0)).map_err(err)?;
    rows.collect::<rusqlite::Result<_>>().map_err(err)
}

fn parse_code(text: &str) -> ErrorCode {
    ErrorCode::ALL.iter().copied().find(|c| c.as_str() == text).unwrap_or(ErrorCode::Internal)
}
