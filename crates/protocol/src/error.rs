use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

macro_rules! error_codes {
    ($( $(#[$doc:meta])* $variant:ident = $text:literal, )*) => {
        /// Stable machine codes for every error that crosses a boundary.
        ///
        /// The text form (`HASH_MISMATCH`) is what clients match on; it never changes
        /// once released. Each variant says who returns it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $( $(#[$doc])* #[serde(rename = $text)] $variant, )*
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $text,)* }
            }
        }
    };
}

error_codes! {
    // --- files and the index -------------------------------------------------------
    /// A path names nothing on disk, or nothing in the index.
    NotFound = "NOT_FOUND",
    /// `-C DIR` or a root that exists but is not a directory.
    NotADirectory = "NOT_A_DIRECTORY",
    /// A file looks binary (NUL bytes or mostly non-text); skipped by the indexer.
    BinaryFile = "BINARY_FILE",
    /// A file is larger than the configured limit; skipped by the indexer.
    FileTooLarge = "FILE_TOO_LARGE",
    /// A JavaScript/TypeScript file looks minified (lines averaging over 110 bytes);
    /// skipped by the indexer unless `index.include_minified` is set.
    MinifiedFile = "MINIFIED_FILE",
    /// A file is not valid UTF-8; skipped by the indexer, refused by the edit engine.
    InvalidUtf8 = "INVALID_UTF8",
    /// No grammar for the file's extension; skipped and counted by the indexer.
    UnknownLanguage = "UNKNOWN_LANGUAGE",
    /// A directory symlink points back into its own ancestry.
    SymlinkLoop = "SYMLINK_LOOP",
    /// Permission denied or another I/O error while reading one file.
    Unreadable = "UNREADABLE",
    /// The file parsed with syntax errors; indexed as far as it parsed.
    SyntaxError = "SYNTAX_ERROR",
    /// The index is older than the files on disk and could not be refreshed.
    IndexStale = "INDEX_STALE",
    /// The index database is damaged or from an unknown (newer) schema.
    IndexCorrupt = "INDEX_CORRUPT",
    /// A path escapes the project root (`..`, absolute, or through a symlink).
    PathOutsideRoot = "PATH_OUTSIDE_ROOT",
    /// The operation was cancelled (Ctrl-C, client cancel); state is consistent.
    Cancelled = "CANCELLED",
    /// An argument is malformed (bad glob, unknown kind, bad range).
    InvalidArgument = "INVALID_ARGUMENT",
    /// An I/O error not tied to one skippable file (disk full, database locked).
    Io = "IO_ERROR",

    // --- edits ---------------------------------------------------------------------
    /// The text to replace was not found; the error carries the closest candidates.
    NoMatch = "NO_MATCH",
    /// The text to replace matches in more than one place.
    AmbiguousMatch = "AMBIGUOUS_MATCH",
    /// The file changed since the caller read it (`expectedHash` differs).
    HashMismatch = "HASH_MISMATCH",
    /// A file to create (or a rename's destination) exists already.
    AlreadyExists = "ALREADY_EXISTS",
    /// Another process holds the project's edit lock and did not release it in time.
    Busy = "BUSY",

    // --- workflows, tools, agents --------------------------------------------------
    StateNotFound = "STATE_NOT_FOUND",
    InvalidState = "INVALID_STATE",
    ToolNotFound = "TOOL_NOT_FOUND",
    ToolExecutionFailed = "TOOL_EXECUTION_FAILED",
    AgentExecutionFailed = "AGENT_EXECUTION_FAILED",
    GuardrailBlocked = "GUARDRAIL_BLOCKED",
    /// A tool that would act on the working tree, the edit history or the outside
    /// was called inside an agent run, whose changes stay in its shadow until
    /// they are approved and applied.
    ShadowRefused = "SHADOW_REFUSED",
    /// The project does not build (or its tests cannot run) before any change: an
    /// agent run stops at once, since nothing it does could be validated.
    BaselineFailed = "BASELINE_FAILED",

    // --- the commit pipeline -------------------------------------------------------
    /// A pipeline stage failed (a command exited non-zero, a limit fired, a commit
    /// did not apply); the hub was rolled back.
    StageFailed = "STAGE_FAILED",
    /// The remote refused the pipeline's push (someone pushed meanwhile).
    PushRejected = "PUSH_REJECTED",
    /// A person answered no at a pipeline approval; the hub was rolled back.
    ApprovalRejected = "APPROVAL_REJECTED",
    /// The working tree has uncommitted changes where a clean one is needed.
    DirtyWorkingTree = "DIRTY_WORKING_TREE",
    /// HEAD is detached where a branch is needed.
    DetachedHead = "DETACHED_HEAD",
    /// The configured test database (`pipeline.database.url`) cannot be reached,
    /// or went away during the SQL step; the hub was rolled back.
    DatabaseUnavailable = "DATABASE_UNAVAILABLE",

    // --- models --------------------------------------------------------------------
    LlmUnavailable = "LLM_UNAVAILABLE",
    LlmRateLimited = "LLM_RATE_LIMITED",
    LlmBadResponse = "LLM_BAD_RESPONSE",
    BudgetExceeded = "BUDGET_EXCEEDED",

    // --- processes -----------------------------------------------------------------
    /// A sandbox limit fired (timeout, memory, processes, output).
    SandboxLimit = "SANDBOX_LIMIT",
    /// A protection the caller required (`--strict`, a named backend) is not available
    /// on this machine; nothing was run.
    SandboxUnavailable = "SANDBOX_UNAVAILABLE",
    /// The command could not be started (not found, not executable).
    CommandNotFound = "COMMAND_NOT_FOUND",
    /// No build or test tool could be detected for the project.
    UnknownProject = "UNKNOWN_PROJECT",

    // --- the HTTP API ---------------------------------------------------------------
    /// A request without the server's bearer token, or with another one.
    Unauthorized = "UNAUTHORIZED",
    /// A request body over the server's limit.
    PayloadTooLarge = "PAYLOAD_TOO_LARGE",

    /// A bug in ironbees; the message says where.
    Internal = "INTERNAL",
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error as it crosses the wire: a machine code, a sentence for people, and
/// what it knows beyond the sentence ([`ErrorDetails`]: the closest candidates for
/// NO_MATCH, the current hash for HASH_MISMATCH, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorInfo {
    pub code: ErrorCode,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "ErrorDetails::is_empty")]
    pub details: ErrorDetails,
}

/// What an error knows beyond its message, for a program to act on (a client
/// retrying with the current hash, an agent reading the closest candidate). One
/// type for every error, each field present only for the codes it names, so a
/// client reads `similarNames` the same way whoever failed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorDetails {
    /// The failing edit's index in the request (edit errors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit_index: Option<usize>,
    /// NO_MATCH: the closest places to `targetString`; AMBIGUOUS_MATCH of an edit:
    /// every match.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<crate::MatchCandidate>,
    /// NO_MATCH / NOT_FOUND of a name or target: names that do exist, closest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty", alias = "suggestions")]
    pub similar_names: Vec<String>,
    /// AMBIGUOUS_MATCH of a target (`understand`, `navigate`, `impact`, ...): every
    /// definition or file it names, as `path:line kind qualified_name`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    /// HASH_MISMATCH: what the caller expected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_hash: Option<String>,
    /// HASH_MISMATCH: the file's hash now (absent when the file is gone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_hash: Option<String>,
    /// HASH_MISMATCH on undo/redo: a later transaction that changed the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_by: Option<String>,
    /// SANDBOX_LIMIT: which limit fired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<crate::LimitKind>,
    /// GUARDRAIL_BLOCKED: every finding of the check, blockers and the rest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<crate::GuardFinding>,
}

impl ErrorDetails {
    pub fn is_empty(&self) -> bool {
        *self == ErrorDetails::default()
    }
}

impl ErrorInfo {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), path: None, details: ErrorDetails::default() }
    }
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }
}

impl std::fmt::Display for ErrorInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.path {
            Some(p) => write!(f, "[{}] {p}: {}", self.code, self.message),
            None => write!(f, "[{}] {}", self.code, self.message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_form_matches_serde_form_for_every_code() {
        for code in ErrorCode::ALL {
            let json = serde_json::to_string(code).unwrap();
            assert_eq!(json, format!("\"{}\"", code.as_str()));
            let back: ErrorCode = serde_json::from_str(&json).unwrap();
            assert_eq!(back, *code);
        }
    }
}
