//! The code-intelligence operations over the session's snapshot: `symbols`,
//! `skeleton`, `status`, `index`, `search`, `localize`, `repomap`, `hotspots`,
//! `graph`, `impact`, `report`.

use std::{path::Path, sync::Arc};

use code_graph::{GraphOptions, ImpactOptions, ReportOptions};
use code_index::{DiskSources, Index, SymbolQuery};
use protocol::{
    ArchitectureReport, GraphQuery, GraphRequest, GraphView, Hotspots, HotspotsRequest, Impact,
    ImpactRequest, IndexRequest, IndexResponse, IndexStatus, LocalizeRequest, LocalizeResponse,
    RepoMap, RepomapRequest, ReportRequest, SearchRequest, SearchResults, SkeletonRequest,
    SkeletonResponse, StatusRequest, SymbolKind, SymbolsRequest, SymbolsResponse,
};
use retrieval::{HybridOptions, LocalizeOptions, RepoMapOptions, Retriever};
use stdx::Call;

use crate::{
    Session,
    error::{Error, Result},
};

/// `-k` and friends: at least 1, the default when absent.
fn count(v: Option<u32>, default: usize, what: &str) -> Result<usize> {
    match v {
        Some(0) => Err(Error::InvalidArgument(format!("{what} must be at least 1"))),
        Some(n) => Ok(n as usize),
        None => Ok(default),
    }
}

/// A request's text: refused when empty.
fn query_text(q: &str) -> Result<&str> {
    if q.trim().is_empty() {
        return Err(Error::InvalidArgument("the query is empty".into()));
    }
    Ok(q)
}

impl Session {
    fn sources(&self) -> DiskSources {
        DiskSources::new(self.root.clone(), self.options.index.max_file_size)
    }

    /// Whether the index holds no file at all (an empty answer then means "nothing
    /// indexed", not "no match"; drivers say so).
    pub fn nothing_indexed(&self, call: &Call<'_>) -> Result<bool> {
        self.refresh(call, false)?;
        Ok(self.index_db().summary()?.files == 0)
    }

    pub fn symbols(&self, req: &SymbolsRequest, call: &Call<'_>) -> Result<SymbolsResponse> {
        let kind = match &req.kind {
            None => None,
            Some(k) => Some(SymbolKind::parse(k).ok_or_else(|| {
                let all: Vec<&str> = SymbolKind::ALL.iter().map(|k| k.as_str()).collect();
                Error::InvalidArgument(format!("unknown kind {k:?}; one of: {}", all.join(", ")))
            })?),
        };
        if req.limit == Some(0) {
            return Err(Error::InvalidArgument("the limit must be at least 1".into()));
        }
        let file = match &req.file {
            None => None,
            // A glob is relative to the root as written; a path is resolved.
            Some(f) if f.contains(['*', '?', '[']) => Some(f.clone()),
            Some(f) => Some(self.rel_path(f)?),
        };
        // The index alone answers: no snapshot.
        for w in self.refresh(call, false)? {
            call.progress.warning(&w.code, &w.message);
        }
        let query = SymbolQuery {
            name: req.name.clone(),
            kind,
            file,
            ignore_case: req.ignore_case,
            limit: req.limit.map(|n| n as usize),
        };
        Ok(SymbolsResponse { symbols: self.index_db().symbols(&query)? })
    }

    /// A file's skeleton, computed from the file as it is now (no index update).
    pub fn skeleton(&self, req: &SkeletonRequest, _call: &Call<'_>) -> Result<SkeletonResponse> {
        let rel = self.rel_path(&req.path)?;
        let file = self.analyzed(&rel)?;
        let skeleton = code_index::render_skeleton(&file.bytes, &file.analysis);
        Ok(SkeletonResponse { path: rel, language: file.lang.name().to_owned(), skeleton })
    }

    /// The index as it is (no update: staleness is part of the answer).
    pub fn status(&self, _req: &StatusRequest, _call: &Call<'_>) -> Result<IndexStatus> {
        Ok(self.index_db().status()?)
    }

    /// Builds or refreshes the index (with the request's excludes and size limit on
    /// top of the configuration), then the snapshot the other operations read.
    pub fn index(&self, req: &IndexRequest, call: &Call<'_>) -> Result<IndexResponse> {
        let mut cfg = self.options.index.clone();
        cfg.exclude.extend(req.exclude.iter().cloned());
        if let Some(n) = req.max_file_size {
            cfg.max_file_size = n;
        }
        // Another configuration than the session's is a one-off index over the same
        // database; the session's snapshot is refreshed from it either way.
        let same = cfg == self.options.index;
        let report = if same {
            self.rebuild(req.rebuild, call)?
        } else {
            let mut index = if req.rebuild {
                Index::rebuild(&self.root, cfg)?
            } else {
                Index::open(&self.root, cfg)?
            };
            let r = index.update(call).map_err(|e| match e {
                code_index::Error::Cancelled => Error::Cancelled,
                e => e.into(),
            })?;
            self.mark_dirty();
            self.refresh(call, true)?;
            r
        };
        // The search index is kept current here, not by the first query after. Both
        // branches above left a current snapshot: no second walk of the tree.
        let snap = self.current_snapshot();
        call.progress.phase("updating the search index", None);
        self.search_index(&snap)?;
        let st = self.index_db().summary()?;
        let snapshot = self.last_derivation.lock().unwrap_or_else(|p| p.into_inner()).take();
        Ok(IndexResponse {
            snapshot,
            root: st.root,
            update: report,
            files: st.files,
            symbols: st.symbols,
            references: st.references,
            imports: st.imports,
            languages: st.languages,
            skipped: st.skipped,
        })
    }

    pub fn search(&self, req: &SearchRequest, call: &Call<'_>) -> Result<SearchResults> {
        let query = query_text(&req.query)?;
        let k = count(req.k, 10, "k")?;
        let (snap, _) = self.snapshot(call)?;
        let search = self.search_index(&snap)?;
        let dense =
            if req.embeddings { Some(self.embedding_retriever(&snap, call)?) } else { None };
        let opts = HybridOptions { k, extra: dense.as_ref().map(|(d, _)| d as &dyn Retriever) };
        Ok(retrieval::hybrid_search(&snap, &search, &self.sources(), query, &opts)?)
    }

    pub fn localize(&self, req: &LocalizeRequest, call: &Call<'_>) -> Result<LocalizeResponse> {
        let query = query_text(&req.query)?;
        let k = count(req.k, 10, "k")?;
        let (snap, _) = self.snapshot(call)?;
        let search = self.search_index(&snap)?;
        let dense =
            if req.embeddings { Some(self.embedding_retriever(&snap, call)?) } else { None };
        let opts = LocalizeOptions {
            k,
            weights: req.weights.clone(),
            explain: req.explain,
            extra: dense.as_ref().map(|(d, _)| d as &dyn Retriever),
            extra_weight: dense.as_ref().map(|(_, w)| *w),
        };
        if !req.rerank {
            let files = retrieval::localize(&snap, &search, &self.root, query, &opts)?;
            return Ok(LocalizeResponse { files, rerank: None });
        }
        // The model reorders the signals' first candidates; the answer is `k` of
        // the reordered ranking.
        let opts = LocalizeOptions { k: k.max(retrieval::RERANK_CANDIDATES), ..opts };
        let files = retrieval::localize(&snap, &search, &self.root, query, &opts)?;
        let (mut files, report) = self.rerank(query, files, call)?;
        files.truncate(k);
        Ok(LocalizeResponse { files, rerank: Some(report) })
    }

    pub fn repomap(&self, req: &RepomapRequest, call: &Call<'_>) -> Result<RepoMap> {
        let tokens = count(req.tokens, 1024, "the token budget")?;
        // The map is cut to a token budget at the end; build the tokenizer meanwhile.
        code_index::warm_up_tokenizer();
        if let Some(q) = &req.query {
            query_text(q)?;
        }
        let (snap, _) = self.snapshot(call)?;
        let mut focus = Vec::new();
        for f in &req.focus {
            let rel = self.rel_path(f)?;
            if snap.project.file_id(&rel).is_some() {
                focus.push(rel);
                continue;
            }
            // A directory stands for the indexed files under it; the root would
            // stand for all of them, leaving nothing to show.
            let dir = rel.trim_end_matches('/');
            if dir.is_empty() {
                return Err(Error::InvalidArgument(format!(
                    "focus {f}: the whole project; focus files are not shown"
                )));
            }
            let under: Vec<String> = snap
                .project
                .files
                .iter()
                .filter(|p| stdx::is_within(&p.path, dir))
                .map(|p| p.path.clone())
                .collect();
            if under.is_empty() && self.root.join(dir).is_dir() {
                return Err(Error::NotFound {
                    message: format!("{f}: no indexed file under this directory"),
                    path: Some(rel),
                    similar: vec![],
                });
            }
            // Not a directory either: `repo_map` says no such file.
            focus.extend(if under.is_empty() { vec![rel] } else { under });
        }
        let search = match &req.query {
            Some(_) => Some(self.search_index(&snap)?),
            None => None,
        };
        let opts = RepoMapOptions { tokens, focus, query: req.query.clone() };
        Ok(retrieval::repo_map(&snap, search.as_deref(), &self.sources(), &opts)?)
    }

    pub fn hotspots(&self, req: &HotspotsRequest, call: &Call<'_>) -> Result<Hotspots> {
        let top = count(req.top, 20, "top")?;
        let under = match &req.under {
            Some(d) => self.rel_path(d)?,
            None => String::new(),
        };
        let churn = self.churn_window(&req.history, true)?;
        let (snap, _) = self.snapshot(call)?;
        // A directory with no indexed file under it (a typo, an ignored tree) is not
        // a directory without hotspots.
        if let Some(dir) = &req.under
            && !under.is_empty()
            && !snap.project.files.iter().any(|f| stdx::is_within(&f.path, &under))
        {
            return Err(Error::NotFound {
                message: format!("under {dir}: no indexed file under this directory"),
                path: Some(under),
                similar: vec![],
            });
        }
        let opts = code_graph::HotspotOptions {
            half_life_days: req.half_life_days.unwrap_or(90.0),
            limit: top,
            under,
        };
        Ok(code_graph::hotspots(&snap, Some(&churn), &self.sources(), &opts))
    }

    /// What a target the caller typed is: a path (absolute, or relative to the
    /// root; `path:line` too), a directory, or a (qualified) name. A path that
    /// leaves the project is `PATH_OUTSIDE_ROOT`, existing or not, rather than a
    /// name looked up.
    fn target(
        &self,
        snap: &code_graph::Snapshot,
        spec: &str,
        all: bool,
    ) -> Result<code_graph::Target> {
        let opts = code_graph::TargetOptions { cwd: String::new(), all };
        let spec = spec.trim();
        let (path_part, rest) = match spec.find([':', ' ']) {
            // `C:` style drive letters do not exist here; `::` is a Rust path.
            Some(i) if !spec[i..].starts_with("::") => (&spec[..i], &spec[i..]),
            _ => (spec, ""),
        };
        let outside = path_part == ".." || path_part.starts_with("../");
        if Path::new(path_part).is_absolute() || outside {
            let rel = self.rel_path(path_part)?;
            let rel = if rel.is_empty() { ".".to_owned() } else { rel };
            return Ok(code_graph::resolve_target(&snap.project, &format!("{rel}{rest}"), &opts)?);
        }
        Ok(code_graph::resolve_target(&snap.project, spec, &opts)?)
    }

    pub fn graph(&self, req: &GraphRequest, call: &Call<'_>) -> Result<GraphView> {
        let (snap, _) = self.snapshot(call)?;
        let target = self.target(&snap, &req.target, req.all)?;
        let depth = match (req.depth, req.query) {
            (Some(d), _) => d,
            (None, GraphQuery::Callers | GraphQuery::Callees) => 3,
            (None, _) => 1,
        };
        let opts = GraphOptions {
            depth,
            max_nodes: req.max_nodes.unwrap_or(300) as usize,
            include_guesses: !req.no_guesses,
        };
        Ok(code_graph::graph_view(&snap, &target, req.query, &opts))
    }

    pub fn impact(&self, req: &ImpactRequest, call: &Call<'_>) -> Result<Impact> {
        let (snap, _) = self.snapshot(call)?;
        let target = self.target(&snap, &req.target, req.all)?;
        let opts = ImpactOptions {
            depth: req.depth.unwrap_or(u32::MAX),
            limit: count(req.limit, 50, "limit")?,
        };
        Ok(code_graph::impact(&snap, &target, &opts))
    }

    pub fn report(&self, req: &ReportRequest, call: &Call<'_>) -> Result<ArchitectureReport> {
        let top = count(req.top, 15, "top")?;
        let churn = self.churn_window(&req.history, false)?;
        let (snap, _) = self.snapshot(call)?;
        let title = self
            .root
            .file_name()
            .map_or_else(|| self.root.display().to_string(), |n| n.to_string_lossy().into_owned());
        let opts = ReportOptions { title, top, half_life_days: req.half_life_days.unwrap_or(90.0) };
        call.progress.phase("analyzing", None);
        Ok(code_graph::report(&snap, Some(&churn), &self.sources(), &opts))
    }

    /// The churn of a history window (`no_history`: an unavailable history saying so).
    pub(crate) fn churn_window(
        &self,
        w: &protocol::HistoryWindow,
        lines: bool,
    ) -> Result<Arc<protocol::Churn>> {
        let max_commits = w.max_commits.unwrap_or(1000);
        let window =
            protocol::ChurnWindow { max_commits: Some(max_commits), since: w.since.clone() };
        if w.no_history {
            return Ok(Arc::new(protocol::Churn::unavailable(
                "history not read (no_history)",
                window,
            )));
        }
        if max_commits == 0 {
            return Err(Error::InvalidArgument("maxCommits must be at least 1".into()));
        }
        self.churn(&git::ChurnOptions {
            max_commits: Some(max_commits),
            since: w.since.clone(),
            lines,
        })
    }
}
