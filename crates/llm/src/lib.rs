//! Model providers behind one interface, dependable under failure.
//!
//! Agents and commands talk to models only through [`Llm`]: a request (system
//! prompt, messages, tool definitions as JSON Schema, an optional output schema)
//! goes in; a [`Response`] (text, tool calls, the structured answer, usage and cost)
//! comes out, either whole ([`Llm::complete`]) or streamed as [`StreamEvent`]s
//! ([`Llm::stream`]). Three wire formats are spoken: the Anthropic Messages API,
//! OpenAI Chat Completions, and the same for OpenAI-compatible servers (Ollama,
//! vLLM, llama.cpp server, LM Studio) at a base URL.
//!
//! The key design decision is that the wire layer is written here, thinly, over
//! reqwest: tool-use blocks, stream deltas split anywhere, prompt-cache markers and
//! usage fields are exactly what the providers document, and every failure is
//! classified into one [`Error`] whose [`Error::code`] is a stable machine code
//! (`LLM_UNAVAILABLE`, `LLM_RATE_LIMITED`, `LLM_BAD_RESPONSE`, `BUDGET_EXCEEDED`).
//! Around each attempt sit the policies, each a pure function tested as a table
//! in its module: `retry::decide` (exponential backoff with jitter, never sooner
//! than `Retry-After`), `breaker::{admit, record}` (a circuit per provider with a
//! half-open probe), the fallback chain, and `accounting::over_budget` (hard token
//! or USD budgets per session and per workflow, checked before a call and while it
//! streams).
//!
//! The crate reads no environment variable and no file: the binary builds
//! [`Settings`] (its `llm:` config section plus [`StandardEnv`]) and passes them in.
//!
//! ```no_run
//! # async fn demo(settings: llm::Settings) -> Result<(), llm::Error> {
//! use llm::{CallOptions, Llm, Request, StreamEvent};
//!
//! let llm = Llm::new(&settings)?;
//! let req = Request::new("Summarize src/lib.rs").with_system("You are terse.");
//! let resp = llm
//!     .stream(&req, &CallOptions::default(), &mut |ev| {
//!         if let StreamEvent::TextDelta { text } = ev {
//!             print!("{text}");
//!         }
//!     })
//!     .await?;
//! println!("\n{} tokens, ${:.4}", resp.usage.total(), resp.cost_usd.unwrap_or(0.0));
//! # Ok(()) }
//! ```
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod accounting;
mod anthropic;
mod breaker;
mod client;
mod error;
mod http;
mod openai;
mod retry;
mod secret;
mod settings;
mod sse;
mod types;
mod wire;

pub use crate::{
    accounting::{Budget, Budgets, Ledger, Price, PriceTable, Spend},
    breaker::{BreakerPolicy, BreakerState},
    client::{CallOptions, DiscoveredModel, Embeddings, Llm, ProviderInfo, discover_models},
    error::{Error, Result, TimeoutPhase},
    retry::RetryPolicy,
    secret::Secret,
    settings::{
        EmbeddingSettings, ProviderKind, ProviderSettings, Settings, StandardEnv, Timeouts,
    },
    types::{
        Content, Message, OutputSchema, Request, Response, Role, StopReason, StreamEvent,
        ToolChoice, ToolDef, Usage, json_object_in,
    },
};
pub use tokio_util::sync::CancellationToken;
