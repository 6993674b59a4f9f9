//! The same server over MCP's streamable HTTP transport: rmcp's tower service,
//! one `Server` (sharing one session) per MCP session.

use std::sync::Arc;

use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};

use crate::Server;

/// How the HTTP transport admits requests.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    /// `Host` headers accepted (DNS-rebinding protection). Empty: rmcp's default,
    /// loopback names only; `["*"]`: any (a server bound beyond loopback, whose
    /// bearer token is the protection).
    pub allowed_hosts: Vec<String>,
    /// Largest request body (rmcp answers 413 beyond it); 0: rmcp's default.
    pub max_body_bytes: usize,
    /// Ends every MCP session when cancelled (the web server shutting down).
    pub shutdown: tokio_util::sync::CancellationToken,
}

/// The registry's tools as an MCP streamable HTTP endpoint, to mount in a web
/// server (any path). Calls run on the blocking pool against `session`, as over
/// stdio.
pub fn http_service(
    session: Arc<engine::Session>,
    options: HttpOptions,
) -> StreamableHttpService<Server, LocalSessionManager> {
    let mut config =
        StreamableHttpServerConfig::default().with_cancellation_token(options.shutdown);
    if options.allowed_hosts.iter().any(|h| h == "*") {
        config = config.disable_allowed_hosts();
    } else if !options.allowed_hosts.is_empty() {
        config = config.with_allowed_hosts(options.allowed_hosts);
    }
    if options.max_body_bytes > 0 {
        config = config.with_max_request_body_bytes(options.max_body_bytes);
    }
    let server = Server::new(session);
    StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}
