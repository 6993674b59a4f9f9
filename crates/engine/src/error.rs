use protocol::{ErrorCode, ErrorInfo};

/// Everything a pillar call can fail with. Each variant maps to one machine code
/// ([`Error::code`]); [`Error::to_info`] keeps the details a client needs to
/// recover (the edit engine's candidates and hashes).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The index could not be opened, updated or read.
    #[error(transparent)]
    Index(#[from] code_index::Error),
    /// The edit engine refused or failed (NO_MATCH, HASH_MISMATCH, a failed check, ...).
    #[error(transparent)]
    Edit(#[from] edit::Error),
    /// A build or test run could not be started.
    #[error(transparent)]
    Sandbox(#[from] sandbox::Error),
    /// git could not be asked (a diff against HEAD, a `since` git reads no date in).
    #[error(transparent)]
    Git(#[from] git::Error),
    /// Embedding the definitions failed (the provider, a cache write); the code is
    /// the cause's.
    #[error("embedding the definitions with {model} ({provider}): {source}")]
    Embedding { model: String, provider: String, source: code_index::Error },
    /// The model client refused or failed (embeddings: no model configured, the
    /// provider down).
    #[error(transparent)]
    Llm(#[from] llm::Error),
    /// A malformed request (an empty target, a bad line range, no edits).
    #[error("{0}")]
    InvalidArgument(String),
    /// The target names nothing: no such file, no definition of that name.
    /// `similar` holds the closest names that do exist.
    #[error("{message}")]
    NotFound { message: String, path: Option<String>, similar: Vec<String> },
    /// The operation needs something this workspace was not given (a sandbox for
    /// tests, git for a diff against HEAD).
    #[error("{0}")]
    Unavailable(String),
    /// The change breaks a guardrail marked blocker (`guardrails.onChange`);
    /// nothing was written.
    #[error("{}", blocked_message(.0))]
    GuardrailBlocked(protocol::GuardReport),
    /// The call was cancelled; nothing is half done.
    #[error("cancelled")]
    Cancelled,
}

fn blocked_message(r: &protocol::GuardReport) -> String {
    let blockers: Vec<String> = r
        .findings
        .iter()
        .filter(|f| f.severity == protocol::GuardSeverity::Blocker)
        .map(|f| {
            let at = match (&f.file, f.line) {
                (Some(p), Some(l)) => format!(" at {p}:{l}"),
                (Some(p), None) => format!(" in {p}"),
                _ => String::new(),
            };
            format!("{} {}{at}: {}", f.rule_id, f.rule_name, f.message)
        })
        .collect();
    format!("the change breaks the guardrails, nothing was written: {}", blockers.join("; "))
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Index(e) => e.code(),
            Error::Edit(e) => e.code(),
            Error::Sandbox(e) => e.code(),
            Error::Git(e) => e.code(),
            Error::Llm(e) => e.code(),
            Error::Embedding { source, .. } => source.code(),
            Error::InvalidArgument(_) => ErrorCode::InvalidArgument,
            Error::NotFound { .. } => ErrorCode::NotFound,
            Error::Unavailable(_) => ErrorCode::ToolExecutionFailed,
            Error::GuardrailBlocked(_) => ErrorCode::GuardrailBlocked,
            Error::Cancelled => ErrorCode::Cancelled,
        }
    }

    /// The wire form with its details.
    pub fn to_info(&self) -> ErrorInfo {
        match self {
            Error::Index(e) => e.to_info(),
            Error::Edit(e) => e.to_info(),
            Error::Sandbox(e) => e.to_info(),
            Error::Git(e) => e.to_info(),
            Error::Llm(e) => e.to_info(),
            Error::NotFound { message, path, similar } => {
                let mut info = ErrorInfo::new(ErrorCode::NotFound, message.clone());
                info.path = path.clone();
                info.details.similar_names = similar.clone();
                info
            }
            Error::GuardrailBlocked(report) => {
                let mut info = ErrorInfo::new(ErrorCode::GuardrailBlocked, self.to_string());
                info.details.findings = report.findings.clone();
                info
            }
            other => ErrorInfo::new(other.code(), other.to_string()),
        }
    }
}
