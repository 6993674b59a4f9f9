//! A few connections kept open for concurrent callers: one is taken for a call
//! and given back after, unless it broke.

use std::{
    ops::{Deref, DerefMut},
    sync::Mutex,
};

use postgres::{Client, NoTls};
use workflow::{Error, Result};

pub(crate) struct Pool {
    config: postgres::Config,
    /// `SET search_path` on every new connection (a store in its own schema).
    schema: Option<String>,
    idle: Mutex<Vec<Client>>,
    max_idle: usize,
    /// Where the database is, for messages (no password).
    pub(crate) shown: String,
}

impl Pool {
    pub(crate) fn new(url: &str, schema: Option<String>, max_idle: usize) -> Result<Pool> {
        let config: postgres::Config = url
            .parse()
            .map_err(|e| Error::store(format!("reading the database URL {}", shown(url)), e))?;
        Ok(Pool { config, schema, idle: Mutex::new(Vec::new()), max_idle, shown: shown(url) })
    }

    pub(crate) fn get(&self) -> Result<Conn<'_>> {
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let client = match idle {
            Some(c) if !c.is_closed() => c,
            _ => self.connect()?,
        };
        Ok(Conn { pool: self, client: Some(client) })
    }

    fn connect(&self) -> Result<Client> {
        let ctx = || format!("connecting to {}", self.shown);
        let mut client = self.config.connect(NoTls).map_err(|e| Error::store(ctx(), e))?;
        if let Some(schema) = &self.schema {
            client
                .batch_execute(&format!(
                    "CREATE SCHEMA IF NOT EXISTS {schema}; SET search_path TO {schema}"
                ))
                .map_err(|e| Error::store(ctx(), e))?;
        }
        Ok(client)
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // A client owns a small runtime, which must not be dropped inside an async
        // context (a server dropping the last handle to its store at shutdown).
        let idle = std::mem::take(self.idle.get_mut().unwrap_or_else(|p| p.into_inner()));
        if !idle.is_empty() {
            let _ = std::thread::spawn(move || drop(idle)).join();
        }
    }
}

/// A connection out of the pool; back in when dropped, if it still works.
pub(crate) struct Conn<'a> {
    pool: &'a Pool,
    client: Option<Client>,
}

impl Deref for Conn<'_> {
    type Target = Client;
    fn deref(&self) -> &Client {
        self.client.as_ref().expect("present until drop")
    }
}

impl DerefMut for Conn<'_> {
    fn deref_mut(&mut self) -> &mut Client {
        self.client.as_mut().expect("present until drop")
    }
}

impl Drop for Conn<'_> {
    fn drop(&mut self) {
        let Some(client) = self.client.take() else { return };
        if client.is_closed() {
            return;
        }
        let mut idle = self.pool.idle.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < self.pool.max_idle {
            idle.push(client);
        }
    }
}

/// A database URL as it may be shown: without its password.
pub(crate) fn shown(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{}{user}{}", &url[..scheme + 3], &url[at..])
        }
        _ if !url.contains("://") => url
            .split_whitespace()
            .filter(|w| !w.starts_with("password="))
            .collect::<Vec<_>>()
            .join(" "),
        _ => url.split('?').next().unwrap_or(url).to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_shown_url_has_no_password() {
        for (url, want) in [
            ("postgres://u:secret@db:5432/x", "postgres://u@db:5432/x"),
            ("postgres://db/x?password=secret", "postgres://db/x"),
            ("postgres://u@db/x", "postgres://u@db/x"),
            ("host=/tmp user=u password=secret dbname=x", "host=/tmp user=u dbname=x"),
        ] {
            assert_eq!(super::shown(url), want);
        }
    }
}
