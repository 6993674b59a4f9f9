//! The workers: claim a job from the store's queue, drive its run on the
//! blocking pool with the graph of its kind (an agent run with the
//! orchestrator, a pipeline run with the pipeline: never one with the other's),
//! and settle the job by how the drive ended.

use std::{sync::Arc, time::Duration};

use protocol::{ErrorCode, ErrorInfo, PipelineApproval, RunStatus};
use tokio_util::sync::CancellationToken;
use workflow::Job;

use crate::app::AppState;

/// Claims jobs until the server shuts down.
pub(crate) async fn run(st: Arc<AppState>, n: usize) {
    loop {
        if st.shutdown.is_cancelled() {
            return;
        }
        let store = Arc::clone(&st.store);
        // Registered before the claim, so a job queued meanwhile wakes us.
        let woken = st.wake.notified();
        match tokio::task::spawn_blocking(move || store.claim_job()).await {
            Ok(Ok(Some(job))) => {
                tracing::debug!(worker = n, job = job.id, run = %job.run_id, "job claimed");
                drive(&st, job).await;
                continue;
            }
            Ok(Ok(None)) => {}
            Ok(Err(e)) => tracing::warn!(worker = n, error = %e, "claiming a job"),
            Err(e) => tracing::warn!(worker = n, error = %e, "claiming a job panicked"),
        }
        tokio::select! {
            () = woken => {}
            () = tokio::time::sleep(st.opts.job_poll) => {}
            () = st.shutdown.cancelled() => return,
        }
    }
}

/// What to do with a job after its drive.
#[derive(Debug, PartialEq)]
enum Settle {
    Finish,
    Release(Duration),
}

async fn drive(st: &Arc<AppState>, job: Job) {
    let (this, stop) = (Arc::clone(st), st.shutdown.child_token());
    let (id, attempts, run_id) = (job.id, job.attempts, job.run_id.clone());
    let joined = tokio::task::spawn_blocking(move || drive_by_kind(&this, job, stop)).await;
    let settle = match joined {
        // Stopped by the shutdown before its next node: any process resumes it.
        Ok(Ok(Driven::Ended(RunStatus::Running))) => Settle::Release(Duration::ZERO),
        Ok(Ok(Driven::Ended(status))) => {
            tracing::debug!(run = %run_id, status = status.name(), "run driven");
            Settle::Finish
        }
        // Another process (a server that drives that kind) may take it.
        Ok(Ok(Driven::NotHere(kind))) => {
            tracing::warn!(run = %run_id, kind, "a job for a kind of run this server does not drive");
            Settle::Release(Duration::from_secs(5))
        }
        Ok(Err(info)) => settle_error(info.code, attempts, &run_id, &info.message),
        Err(e) => {
            tracing::error!(run = %run_id, error = %e, "a run's drive panicked");
            settle_error(ErrorCode::Internal, attempts, &run_id, &e.to_string())
        }
    };
    let store = Arc::clone(&st.store);
    let done = tokio::task::spawn_blocking(move || match settle {
        Settle::Finish => store.finish_job(id),
        Settle::Release(delay) => store.release_job(id, delay),
    })
    .await;
    if let Ok(Err(e)) = done {
        tracing::warn!(job = id, error = %e, "settling a job (its lease runs out instead)");
    }
}

/// How a job's drive ended.
enum Driven {
    /// The run was driven; where it stands now.
    Ended(RunStatus),
    /// The run is of a kind this server has no graph for.
    NotHere(String),
}

/// Drives the job's run with its own kind's graph (on the blocking pool).
fn drive_by_kind(st: &AppState, job: Job, stop: CancellationToken) -> Result<Driven, ErrorInfo> {
    let run = st.store.run(&job.run_id).map_err(|e| e.to_info())?.ok_or_else(|| {
        ErrorInfo::new(ErrorCode::StateNotFound, format!("no run {:?}", job.run_id))
    })?;
    match run.kind.as_str() {
        agent::RUN_KIND => {
            let decision = job
                .input
                .as_ref()
                .map(agent::parse_decision)
                .transpose()
                .map_err(|e| e.to_info())?;
            let drive = agent::Drive {
                answers: job.answers,
                stop: Some(stop.clone()),
                ..agent::Drive::default()
            };
            let outcome =
                st.orch.drive(&job.run_id, decision.as_ref(), drive).map_err(|e| e.to_info())?;
            // `pipeline.onAgentApply`: the applied change committed and a pipeline
            // started on it, as `ironbees run` does; its approvals come over HTTP.
            // The agent run's own outcome stands whatever the pipeline does.
            if let (Some(p), Some(applied)) =
                (st.pipeline.get(), pipeline::AgentApplied::of(&outcome))
            {
                let drive = pipeline::Drive { stop: Some(stop), ..Default::default() };
                match p.after_agent_run(&applied, false, drive) {
                    Ok(Some(o)) => tracing::info!(
                        run = %outcome.run_id,
                        pipeline = %o.pipeline_id,
                        "the applied change went to the commit pipeline"
                    ),
                    Ok(None) => {}
                    Err(e) => tracing::warn!(
                        run = %outcome.run_id,
                        "pipeline.onAgentApply: no pipeline for the applied change: {e}"
                    ),
                }
            }
            Ok(Driven::Ended(outcome.status))
        }
        pipeline::RUN_KIND => {
            let Some(p) = st.pipeline.get() else { return Ok(Driven::NotHere(run.kind)) };
            let approval = job
                .input
                .map(serde_json::from_value::<PipelineApproval>)
                .transpose()
                .map_err(|e| {
                    ErrorInfo::new(
                        ErrorCode::InvalidArgument,
                        format!(
                            "not a pipeline approval ({e}): expected {{\"approved\": true|false}}"
                        ),
                    )
                })?;
            let drive = pipeline::Drive {
                answers: job.answers,
                stop: Some(stop),
                ..pipeline::Drive::default()
            };
            let outcome =
                p.drive(&job.run_id, approval.as_ref(), drive).map_err(|e| e.to_info())?;
            Ok(Driven::Ended(outcome.status))
        }
        _ => Ok(Driven::NotHere(run.kind)),
    }
}

/// Jobs that cannot succeed by waiting are dropped; a run another process
/// holds is tried again soon; anything else a few times, with a pause.
fn settle_error(code: ErrorCode, attempts: u32, run_id: &str, message: &str) -> Settle {
    match code {
        ErrorCode::Busy => Settle::Release(Duration::from_millis(500)),
        ErrorCode::InvalidState | ErrorCode::StateNotFound | ErrorCode::InvalidArgument => {
            tracing::info!(run = run_id, "job dropped: {message}");
            Settle::Finish
        }
        _ if attempts >= 5 => {
            tracing::error!(run = run_id, "job dropped after {attempts} attempts: {message}");
            Settle::Finish
        }
        _ => {
            tracing::warn!(run = run_id, "job failed, retried later: {message}");
            Settle::Release(Duration::from_secs(2))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_settle_by_what_went_wrong() {
        let cases = [
            (ErrorCode::Busy, 9, Settle::Release(Duration::from_millis(500))),
            (ErrorCode::InvalidState, 1, Settle::Finish),
            (ErrorCode::StateNotFound, 1, Settle::Finish),
            (ErrorCode::Io, 1, Settle::Release(Duration::from_secs(2))),
            (ErrorCode::Io, 5, Settle::Finish),
        ];
        for (code, attempts, want) in cases {
            assert_eq!(settle_error(code, attempts, "r", "m"), want, "{code} {attempts}");
        }
    }
}
