//! What a model call reports, in the words every driver shows: tokens and why
//! the model stopped. `llm` returns these; agent runs put them in their events.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum StopReason {
    EndTurn,
    MaxTokens,
    ToolUse,
    StopSequence,
    /// The provider filtered the output.
    ContentFilter,
    /// Anything else the server said, or nothing.
    Other,
}

/// Tokens of one call (or a sum of calls). `inputTokens` excludes cached input:
/// Anthropic reports it that way, and OpenAI's `prompt_tokens` is split accordingly,
/// so costs add up the same for both.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Input read from the provider's prompt cache (cheaper).
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Input written to the provider's prompt cache (Anthropic; dearer once).
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// The server reported no usage; these numbers are estimates (characters / 4).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
}

impl Usage {
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens
    }

    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.estimated |= other.estimated;
    }
}
