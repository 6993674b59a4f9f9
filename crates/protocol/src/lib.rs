//! The ironbees vocabulary.
//!
//! Every driver (the CLI, the MCP server, the HTTP API, the agent) speaks these types,
//! and every library crate returns them at its boundary. They are plain serde data: no
//! I/O, no behaviour beyond small conversions, and no dependency on any other ironbees
//! crate, so the vocabulary can be read, versioned and reviewed on its own.
//!
//! Enums that cross the wire are `#[non_exhaustive]`: adding a symbol kind or an error
//! code is not a breaking change for clients that match with a wildcard.
//!
//! ```
//! use protocol::ErrorCode;
//! assert_eq!(ErrorCode::HashMismatch.as_str(), "HASH_MISMATCH");
//! let json = serde_json::to_string(&ErrorCode::PathOutsideRoot).unwrap();
//! assert_eq!(json, "\"PATH_OUTSIDE_ROOT\"");
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod agent;
mod api;
mod churn;
mod compat;
mod edit;
mod error;
mod exec;
mod guard;
mod index;
mod intel;
mod model;
mod ops;
mod pillars;
mod pipeline;
mod route;
mod workflow;

pub use crate::{
    agent::{
        AgentSpend, ApprovalDecision, Approver, Baseline, CodingState, CommandKind, CommandScope,
        EditType, ExecutionPlan, FileEdit, Gate, OverlayFile, PlanStep, PlannerAnswer, RunOutcome,
        RunSettings, RunSpend, TaskEstimate, TaskGraph, TaskRound, TestScope, Validation, Verdict,
        WorkspaceSync, nodes,
    },
    api::{
        ApproveRequest, CancelRequest, DiffSummary, ExecuteRequest, PipelineApproveRequest,
        PipelineRunView, RunAccepted, RunListItem, RunPage, RunView, StateUpdate,
    },
    churn::{Churn, ChurnWindow, CommitTouch, FileChurn, LineSpan},
    compat::{
        AnalyzeRelationshipRequest, AnalyzeRelationshipResponse, DirEntry, Direction, EditCodeEdit,
        EditCodeOperation, EditCodeRequest, EntryType, GetHierarchyRequest, ListDirectoryRequest,
        ListDirectoryResponse, ManageProjectRequest, ReadCodeRequest, RelationMode,
        SearchProjectRequest, SearchProjectResponse,
    },
    edit::{
        AppliedEdit, EditOp, EditOptions, EditRequest, EditResult, FileChange, FileChangeKind,
        InsertPosition, LineRange, MatchCandidate, Normalization, SymbolPart, TransactionCommitted,
        TransactionKind, TransactionState, TransactionSummary,
    },
    error::{ErrorCode, ErrorDetails, ErrorInfo},
    exec::{
        BuildResult, CapturedOutput, Diagnostic, ExecResult, Isolation, LimitKind, Severity,
        TestFailure, TestResult,
    },
    guard::{CriticIssue, Critique, GuardFinding, GuardReport, GuardSeverity},
    index::{FileSkip, IndexStats, LanguageStats, Symbol, SymbolKind},
    intel::{
        AffectedTest, AffectedTestPriority, ArchitectureReport, BlastRadius, CentralFile,
        CentralSymbol, ChurnStats, CodeComplexity, Dependent, EdgeKind, Evidence, FileHotspot,
        FileResult, FileRole, GraphEdge, GraphNode, GraphQuery, GraphView, HistoryInfo,
        HotspotBasis, HotspotCluster, Hotspots, Impact, ImpactRisk, IndexStatus, Insight,
        InsightKind, InsightSeverity, LanguageShare, MapFile, MapSeeds, MapSymbol, Matched,
        MixWeights, Overview, ParseProblem, QueryKind, Radius, RepoMap, Resolution, ResolvedKind,
        ResolvedTarget, RoleCount, ScoreParts, SearchHit, SearchResults, Skeleton, SkipGroup,
        Staleness, SymbolDependent, SymbolHotspot, SymbolRef, UpdateReport,
    },
    model::{StopReason, Usage},
    ops::{
        BuildRequest, BuildResponse, Effect, ExecRequest, GraphRequest, GuardCheckRequest,
        HistoryRequest, HistoryResponse, HistoryWindow, HotspotsRequest, ImpactRequest,
        IndexRequest, IndexResponse, LocalizeRequest, LocalizeResponse, Op, Operation, ProjectInfo,
        RedoRequest, RepomapRequest, ReportRequest, RerankReport, RouteRequest, SandboxOptions,
        SearchRequest, SkeletonRequest, SkeletonResponse, SnapshotDerivation, SnapshotReport,
        StatusRequest, SymbolsRequest, SymbolsResponse, TestRequest, TestResponse, ToolSource,
        UndoRequest,
    },
    pillars::{
        AffectedFile, ArchitecturalRole, CallEdge, ChangeOptions, ChangeRequest, ChangeResponse,
        ChangedSymbol, CheckLevel, CheckReport, Complexity, Depth, FileEdge, FileInsight, Guidance,
        HotSpot, ImpactRadius, ImpactReport, Intent, IntentConstraints, IntentTarget, Location,
        ManageCommand, ManageRequest, ManageResponse, NavigateAction, NavigateRequest,
        NavigateResponse, NextAction, Pillar, PillarError, ProcessMemoryInfo, ProjectStatus,
        RankedFile, ReadRequest, ReadResponse, ReadView, RebuildReport, RebuildScope,
        RecoveryStrategy, Report, Risk, RiskLevel, Scope, SuggestedTest, SymbolBrief, SymbolChange,
        SymbolInsight, TargetKind, TestPriority, UnderstandInclude, UnderstandRequest,
        UnderstandResponse, Warning, WarningLevel, WriteRequest, WriteResponse,
    },
    pipeline::{
        CloneResult, CodeResult, CommandSummary, CommitInfo, DatabaseConfig, ExecutionConfig,
        GitConfig, HypotheticalIndex, LoggingConfig, NotifyResult, PipelineApproval,
        PipelineConfig, PipelineError, PipelineLlmConfig, PipelineState, PlanSummary,
        QueryLocation, RefactorResult, RefactoringConfig, SlackConfig, SqlCandidate,
        SqlCandidateKind, SqlOutcome, SqlQueryResult, SqlStepResult, SqlTiming, StageResults,
        StageStatus, SyncResult, TestStageResult, stages,
    },
    route::{Route, RouteBudget, RouteIntent, Strategy},
    workflow::{CheckpointMeta, RunEvent, RunEventKind, RunStatus, RunSummary},
};
