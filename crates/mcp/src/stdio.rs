//! The stdio front: a line filter between the client and rmcp.
//!
//! Why: rmcp's stdio codec silently drops a line that is not JSON (the client
//! waits forever for an answer), and answers some invalid requests with an error
//! that has no `id` member, which JSON-RPC 2.0 requires (`null` when the id is
//! unknown). This filter answers what rmcp would not: a line that does not parse
//! gets a Parse error (-32700, id null); an object whose `jsonrpc` is not "2.0"
//! gets an Invalid Request (-32600) with its id. Everything else goes to rmcp
//! unchanged, and rmcp's output is copied out line by line (so our error lines
//! never interleave with its messages), with `"id": null` added to error
//! responses that lack an id. The server keeps serving after each bad line.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// Serves `server` over `input`/`output` (newline-delimited JSON-RPC).
pub(crate) async fn serve<R, W>(
    server: crate::Server,
    input: R,
    output: W,
) -> Result<(), crate::Error>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    use rmcp::ServiceExt;

    let (to_rmcp, rmcp_in) = tokio::io::duplex(1 << 16);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(1 << 16);
    let (err_tx, err_rx) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    let reader = tokio::spawn(filter_input(input, to_rmcp, err_tx));
    let writer = tokio::spawn(merge_output(from_rmcp, err_rx, output));
    let served = async {
        let service = server
            .serve((rmcp_in, rmcp_out))
            .await
            .map_err(|e| crate::Error::Session(e.to_string()))?;
        service.waiting().await.map_err(|e| crate::Error::Session(e.to_string()))?;
        Ok::<(), crate::Error>(())
    }
    .await;
    reader.abort();
    // rmcp has dropped its output: the writer drains what is left and ends.
    let _ = writer.await;
    served
}

/// What to do with one input line.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// Hand it to rmcp.
    Forward,
    /// Blank: ignore.
    Skip,
    /// Answer with this error response; rmcp never sees the line.
    Reject(Value),
}

/// The policy, a pure function of the line's bytes.
fn judge(line: &[u8]) -> Verdict {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => return Verdict::Reject(error(Value::Null, -32700, &format!("Parse error: {e}"))),
    };
    let Value::Object(m) = &value else {
        // Arrays (batches, which MCP does not use) and scalars: rmcp answers them.
        return Verdict::Forward;
    };
    if m.get("jsonrpc").and_then(Value::as_str) == Some("2.0") {
        return Verdict::Forward;
    }
    let id = match m.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    let got = m.get("jsonrpc").map_or_else(|| "nothing".to_owned(), Value::to_string);
    Verdict::Reject(error(
        id,
        -32600,
        &format!("Invalid Request: jsonrpc must be \"2.0\", got {got}"),
    ))
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

async fn filter_input<R: AsyncRead + Unpin>(
    input: R,
    mut to_rmcp: tokio::io::DuplexStream,
    errors: tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
) {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        match judge(&line) {
            Verdict::Skip => {}
            Verdict::Forward => {
                if !line.ends_with(b"\n") {
                    line.push(b'\n');
                }
                if to_rmcp.write_all(&line).await.is_err() {
                    break;
                }
            }
            Verdict::Reject(response) => {
                tracing::warn!(
                    "bad JSON-RPC input line answered with {}",
                    response["error"]["code"]
                );
                if errors.send(response.to_string().into_bytes()).is_err() {
                    break;
                }
            }
        }
    }
    // Dropping `to_rmcp` is rmcp's end of input.
}

async fn merge_output<W: AsyncWrite + Unpin>(
    from_rmcp: tokio::io::DuplexStream,
    mut errors: tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>,
    mut output: W,
) {
    let mut from_rmcp = BufReader::new(from_rmcp);
    let mut line = Vec::new();
    let mut errors_open = true;
    loop {
        line.clear();
        tokio::select! {
            read = from_rmcp.read_until(b'\n', &mut line) => {
                if !matches!(read, Ok(n) if n > 0) {
                    break;
                }
                let fixed = with_null_id(&line);
                if write_line(&mut output, fixed.as_deref().unwrap_or(&line)).await.is_err() {
                    return;
                }
            }
            msg = errors.recv(), if errors_open => match msg {
                Some(msg) => {
                    if write_line(&mut output, &msg).await.is_err() {
                        return;
                    }
                }
                None => errors_open = false,
            },
        }
    }
    while let Ok(msg) = errors.try_recv() {
        let _ = write_line(&mut output, &msg).await;
    }
}

/// rmcp's error responses to requests it could not read carry no `id`; JSON-RPC
/// 2.0 requires one (`null`). Only error responses are parsed (cheap prefix test).
fn with_null_id(line: &[u8]) -> Option<Vec<u8>> {
    let trimmed = line.trim_ascii_start();
    if !trimmed.starts_with(b"{\"jsonrpc\":\"2.0\",\"error\"") {
        return None;
    }
    let mut v: Value = serde_json::from_slice(line).ok()?;
    let m = v.as_object_mut()?;
    if m.contains_key("id") {
        return None;
    }
    m.insert("id".into(), Value::Null);
    Some(v.to_string().into_bytes())
}

async fn write_line<W: AsyncWrite + Unpin>(out: &mut W, line: &[u8]) -> std::io::Result<()> {
    out.write_all(line.trim_ascii_end()).await?;
    out.write_all(b"\n").await?;
    out.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(v: &Verdict) -> Option<(i64, Value)> {
        match v {
            Verdict::Reject(r) => Some((r["error"]["code"].as_i64()?, r["id"].clone())),
            _ => None,
        }
    }

    #[test]
    fn judge_table() {
        // (line, expected error code and id, skipped)
        type Case<'a> = (&'a [u8], Option<(i64, Value)>, bool);
        let cases: &[Case<'_>] = &[
            (b"\n", None, true),
            (b"   \r\n", None, true),
            (b"this is not json\n", Some((-32700, Value::Null)), false),
            (b"{\"jsonrpc\":\"2.0\",\"id\":1\n", Some((-32700, Value::Null)), false),
            (b"\xff\xfe{}\n", Some((-32700, Value::Null)), false),
            (
                b"{\"jsonrpc\":\"1.0\",\"id\":2,\"method\":\"tools/list\"}\n",
                Some((-32600, json!(2))),
                false,
            ),
            (b"{\"id\":\"a\",\"method\":\"tools/list\"}\n", Some((-32600, json!("a"))), false),
            (b"{\"jsonrpc\":2.0,\"id\":{},\"method\":\"x\"}\n", Some((-32600, Value::Null)), false),
            (b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"no/such\"}\n", None, false),
            (b"[1,2]\n", None, false),
        ];
        for (line, want, skip) in cases {
            let v = judge(line);
            assert_eq!(code(&v), *want, "{}", String::from_utf8_lossy(line));
            assert_eq!(v == Verdict::Skip, *skip, "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn error_responses_without_id_get_a_null_id() {
        let fixed = with_null_id(
            b"{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,\"message\":\"Invalid request\"}}\n",
        )
        .unwrap();
        let v: Value = serde_json::from_slice(&fixed).unwrap();
        assert_eq!(v["id"], Value::Null);
        assert!(v.as_object().unwrap().contains_key("id"));
        assert_eq!(v["error"]["code"], -32600);
        // Responses with an id, and results, pass untouched.
        assert!(
            with_null_id(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32601}}").is_none()
        );
        assert!(with_null_id(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}").is_none());
    }
}
