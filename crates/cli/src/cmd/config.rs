//! `ironbees config show`: the merged configuration, where it came from, and the
//! model providers it resolves to. Secrets are masked.

use anyhow::Result;
use serde_json::json;

use super::Ctx;
use crate::output::Output;

#[derive(Debug, clap::Subcommand)]
pub enum ConfigCommand {
    /// Print the merged configuration (YAML; `--json` for JSON), secrets masked.
    #[command(after_help = "Example:\n  ironbees config show --json")]
    Show,
}

pub fn run(ctx: &Ctx, out: &Output, cmd: &ConfigCommand) -> Result<i32> {
    let ConfigCommand::Show = cmd;
    let env = &ctx.host.env().vars;
    let config = ctx.host.config();
    // Values the project's `.env` filled in are as secret as the process's.
    let all: Vec<(String, String)> = env.iter().chain(&config.dotenv).cloned().collect();
    let value = host::masked(&config.value, &all);
    // The providers as the `llm` crate sees them (keys: only whether one is set).
    let llm =
        ctx.host.llm_settings().map_err(anyhow::Error::from).and_then(|s| Ok(llm::Llm::new(&s)?));
    let (providers, llm_error) = match &llm {
        Ok(l) => (Some(l.providers()), None),
        Err(e) => (None, Some(crate::exit::error_info(e))),
    };
    // The standard variables the model providers are read from are sources too
    // (24.15: "sources: none" while ANTHROPIC_API_KEY configured a provider).
    let mut model_vars: Vec<&str> = env
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| {
            k.starts_with("ANTHROPIC_")
                || k.starts_with("OPENAI_")
                || ["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"]
                    .contains(k)
        })
        .collect();
    model_vars.sort_unstable();
    if out.json {
        out.json(&json!({
            "sources": config.sources,
            "modelVariables": model_vars,
            "config": value,
            "llm": {"providers": providers, "error": llm_error},
        }))?;
        return Ok(0);
    }
    let dim = out.style_out().dim();
    if config.sources.is_empty() && model_vars.is_empty() {
        out.line(dim.apply_to("# sources: none (built-in defaults)").to_string());
    } else {
        out.line(dim.apply_to("# sources, later wins:").to_string());
        for s in &config.sources {
            out.line(dim.apply_to(format!("#   {s}")).to_string());
        }
        if !model_vars.is_empty() {
            let vars = model_vars.join(", ");
            out.line(
                dim.apply_to(format!("#   model providers from the environment ({vars})"))
                    .to_string(),
            );
        }
    }
    let yaml = if value.as_object().is_some_and(|m| m.is_empty()) {
        "{}\n".to_owned()
    } else {
        yaml_serde::to_string(&value)?
    };
    for l in yaml.lines() {
        out.line(l);
    }
    out.line(dim.apply_to("# model providers (after ANTHROPIC_*/OPENAI_* variables):").to_string());
    match (providers, llm_error) {
        (Some(ps), _) => {
            for p in ps {
                let role = match p.chain_position {
                    Some(0) => "default".to_owned(),
                    Some(n) => format!("fallback {n}"),
                    None => "not in chain".to_owned(),
                };
                out.line(
                    dim.apply_to(format!(
                        "#   {} ({role}): {} {} model {} key {}",
                        p.name,
                        p.kind,
                        p.base_url,
                        p.model,
                        if p.has_key { "set" } else { "not set" }
                    ))
                    .to_string(),
                );
            }
        }
        (None, Some(e)) => out
            .line(dim.apply_to(format!("#   not usable: [{}] {}", e.code, e.message)).to_string()),
        (None, None) => {}
    }
    Ok(0)
}
