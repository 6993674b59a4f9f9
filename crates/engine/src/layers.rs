//! Seed 002's layers as operations every driver reaches through the registry:
//! `route` (Layer 1, the router) and `guard_check` (M2, the guardrails), the
//! same functions `ironbees route` and `ironbees guard check` print.

use protocol::{GuardCheckRequest, GuardReport, Route, RouteRequest};
use stdx::Call;

use crate::{
    Session,
    error::{Error, Result},
};

impl Session {
    /// `route`: a function of the text and the budget; reads no project.
    pub fn route(&self, req: &RouteRequest, _call: &Call<'_>) -> Result<Route> {
        route_of(req)
    }

    /// `guard_check`: the change the request names against the rules in effect
    /// (none, and a report with no finding, when guardrails are turned off).
    pub fn guard_check(&self, req: &GuardCheckRequest, _call: &Call<'_>) -> Result<GuardReport> {
        let Some(rules) = &self.options.guard_rules else { return Ok(GuardReport::default()) };
        guard_check(&self.root, rules, req)
    }
}

/// [`Session::route`] without a session.
fn route_of(req: &RouteRequest) -> Result<Route> {
    if req.request.trim().is_empty() {
        return Err(Error::InvalidArgument("`request` is empty: give the request's text".into()));
    }
    Ok(retrieval::route_with_budget(&req.request, req.budget.unwrap_or_default()))
}

/// [`Session::guard_check`] without a session: the diff text, or `git diff` of
/// the staged change, a range or the work tree in the repository at `root`.
pub fn guard_check(
    root: &std::path::Path,
    rules: &guard::RuleSet,
    req: &GuardCheckRequest,
) -> Result<GuardReport> {
    let asked = [req.diff.is_some(), req.staged, req.range.is_some()];
    if asked.iter().filter(|a| **a).count() > 1 {
        return Err(Error::InvalidArgument(
            "give at most one of `diff`, `staged` and `range`".into(),
        ));
    }
    let text = match (&req.diff, &req.range) {
        (Some(d), _) => d.clone(),
        (None, range) => {
            let of = match range {
                Some(r) => git::DiffOf::Revs(r),
                None if req.staged => git::DiffOf::Staged,
                None => git::DiffOf::WorkTree,
            };
            if !git::is_repository(root)? {
                return Err(Error::InvalidArgument(format!(
                    "{} is not in a git repository: give the change as `diff`",
                    root.display()
                )));
            }
            git::diff(root, of).map_err(|e| match e {
                git::Error::Failed { stderr, .. } => {
                    Error::InvalidArgument(format!("git diff: {}", stderr.trim()))
                }
                other => other.into(),
            })?
        }
    };
    Ok(rules.check(&guard::Change::from_unified_diff(&text)))
}
