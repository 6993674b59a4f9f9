//! Connections a request leaves unread.
//!
//! A handler may answer before it reads its request's body to the end: a body
//! over the limit (413), a missing token (401), an unknown endpoint (404). hyper
//! then closes the connection after the answer, since the rest of the body is
//! still on the wire; but it says so (`Connection: close`) only when it noticed
//! the dropped body before writing the answer's head, and usually the answer is
//! written first. A client told nothing keeps the connection for its next
//! request, and unless it sees the close in time (a race a loaded machine
//! loses), that request is sent into a closed connection and gets no answer
//! (hyper's `IncompleteMessage`). So every answer to a request whose body was
//! not read to its end says `Connection: close` itself.

use std::{
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll},
};

use axum::{
    body::{Body, Bytes, HttpBody},
    extract::Request,
    http::{HeaderValue, header},
    middleware::Next,
    response::Response,
};
use http_body::{Frame, SizeHint};

/// Middleware: `Connection: close` on the answer to a request whose body the
/// handler left unread.
pub(crate) async fn close_unread(req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    if body.is_end_stream() {
        return next.run(Request::from_parts(parts, body)).await;
    }
    let read = Arc::new(AtomicBool::new(false));
    let body = Body::new(Tracked { inner: body, read: Arc::clone(&read) });
    let mut response = next.run(Request::from_parts(parts, body)).await;
    if !read.load(Ordering::Acquire) {
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// A request body that records reaching its end.
struct Tracked {
    inner: Body,
    read: Arc<AtomicBool>,
}

impl HttpBody for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) || self.inner.is_end_stream() {
            self.read.store(true, Ordering::Release);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use axum::{
        Router,
        extract::DefaultBodyLimit,
        middleware,
        routing::{get, post},
    };
    use tokio::{
        io::{AsyncReadExt, AsyncWriteExt},
        net::{TcpListener, TcpStream},
    };

    use super::*;

    /// One request on a fresh connection; the answer's head, lowercased.
    async fn head_of(addr: std::net::SocketAddr, request: &[u8]) -> String {
        let (mut r, mut w) = TcpStream::connect(addr).await.unwrap().into_split();
        // Written beside the reading: the server may answer (and close) before
        // it takes the whole body.
        let request = request.to_vec();
        let writer = tokio::spawn(async move {
            let _ = w.write_all(&request).await;
            w
        });
        let mut got = Vec::new();
        let mut buf = [0; 4096];
        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
            match r.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
        writer.abort();
        String::from_utf8_lossy(&got).to_lowercase()
    }

    fn posting(path: &str, body: &str) -> Vec<u8> {
        format!(
            "POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    }

    #[tokio::test]
    async fn an_answer_that_left_the_body_unread_closes_the_connection() {
        let app = Router::new()
            .route("/read", post(|body: String| async move { body.len().to_string() }))
            .route("/ignore", post(|| async { "not read" }))
            .route("/get", get(|| async { "ok" }))
            .layer(DefaultBodyLimit::max(16))
            .layer(middleware::from_fn(close_unread));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

        // (request, status, whether the answer says the connection closes)
        let big = "x".repeat(1 << 20);
        let cases: [(Vec<u8>, &str, bool); 4] = [
            (posting("/read", "small"), "200", false),
            (b"GET /get HTTP/1.1\r\nhost: x\r\n\r\n".to_vec(), "200", false),
            (posting("/read", &big), "413", true),
            (posting("/ignore", &big), "200", true),
        ];
        for (request, status, closes) in cases {
            let head = head_of(addr, &request).await;
            let line = head.lines().next().unwrap_or_default().to_owned();
            assert!(line.contains(status), "{line}\n{head}");
            assert_eq!(head.contains("connection: close"), closes, "{line}\n{head}");
        }
    }
}
