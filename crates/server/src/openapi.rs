//! The OpenAPI 3.1 document of the API. Its schemas are generated from the
//! `protocol` types the handlers parse and answer (schemars, JSON Schema 2020-12,
//! OpenAPI 3.1's dialect); only the table of routes is written here, beside the
//! router it describes.

use protocol::{
    ApproveRequest, CancelRequest, ErrorInfo, ExecuteRequest, PipelineApproveRequest,
    PipelineRunView, RunAccepted, RunEvent, RunPage, RunView, StateUpdate,
};
use schemars::generate::SchemaSettings;
use serde_json::{Value, json};

/// The API's OpenAPI 3.1 document.
pub fn openapi() -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.definitions_path = "/components/schemas".into();
    settings.meta_schema = None;
    let mut g = settings.into_generator();
    let mut schema =
        |f: fn(&mut schemars::SchemaGenerator) -> schemars::Schema| f(&mut g).to_value();
    let execute = schema(|g| g.subschema_for::<ExecuteRequest>());
    let approve = schema(|g| g.subschema_for::<ApproveRequest>());
    let cancel = schema(|g| g.subschema_for::<CancelRequest>());
    let accepted = schema(|g| g.subschema_for::<RunAccepted>());
    let view = schema(|g| g.subschema_for::<RunView>());
    let page = schema(|g| g.subschema_for::<RunPage>());
    let error = schema(|g| g.subschema_for::<ErrorInfo>());
    let event = schema(|g| g.subschema_for::<RunEvent>());
    let update = schema(|g| g.subschema_for::<StateUpdate>());
    let pipeline_approve = schema(|g| g.subschema_for::<PipelineApproveRequest>());
    let pipeline_view = schema(|g| g.subschema_for::<PipelineRunView>());
    let schemas = g.take_definitions(true);

    let json_body =
        |s: &Value| json!({ "required": true, "content": { "application/json": { "schema": s } } });
    let ok = |description: &str, s: &Value| json!({ "description": description, "content": { "application/json": { "schema": s } } });
    let fail = |description: &str| json!({ "description": description, "content": { "application/json": { "schema": error.clone() } } });
    let stream = |description: &str| {
        json!({
            "description": description,
            "content": { "text/event-stream": { "schema": {
                "type": "string",
                "description": "Server-sent events. Each event without a name has `id:` = the run \
                    event's `seq` and `data:` = a RunEvent (components/schemas/RunEvent); \
                    `execute` also sends `event: run` (data: RunAccepted) first and \
                    `event: state` (data: StateUpdate) after each checkpoint."
            } } }
        })
    };
    let unauthorized = fail("missing or wrong bearer token (UNAUTHORIZED)");
    let common = |mut responses: Value| {
        responses["401"] = unauthorized.clone();
        responses
    };
    let string_param = |name: &str, place: &str, description: &str| {
        json!({ "name": name, "in": place, "required": place == "path",
                "description": description, "schema": { "type": "string" } })
    };
    let int_param = |name: &str, place: &str, description: &str| {
        json!({ "name": name, "in": place, "required": false, "description": description,
                "schema": { "type": "integer", "minimum": 0 } })
    };

    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "ironbees agent API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Agent mode as a service (`ironbees serve`): start a coding run, follow \
                its events, answer its gates, cancel it, inspect it. The commit pipeline's runs \
                (started by `ironbees commit` or `ironbees pipeline start`) are listed, followed, \
                answered and cancelled under `/api/pipeline`. Every request needs \
                `Authorization: Bearer <token>`. Errors are JSON with a machine code. The same \
                server offers the tool registry over MCP's streamable HTTP transport at `/mcp`."
        },
        "security": [{ "bearer": [] }],
        "paths": {
            "/api/agent/execute": { "post": {
                "operationId": "execute",
                "summary": "Start a run; stream its events until it waits for a human or ends",
                "requestBody": json_body(&execute),
                "responses": common(json!({
                    "200": stream("the run's events as they happen (Accept: text/event-stream, the default)"),
                    "202": ok("the run is queued (Accept: application/json)", &accepted),
                    "400": fail("a bad request (INVALID_ARGUMENT) or a path outside the project (PATH_OUTSIDE_ROOT)"),
                    "413": fail("the body is too large (PAYLOAD_TOO_LARGE)")
                }))
            } },
            "/api/agent/approve": { "post": {
                "operationId": "approve",
                "summary": "Answer the gate a run waits at (approve, approve an edited plan, or reject with feedback)",
                "requestBody": json_body(&approve),
                "responses": common(json!({
                    "202": ok("the answer is queued; the run goes on", &accepted),
                    "400": fail("the run is a commit pipeline's, answered under /api/pipeline (INVALID_ARGUMENT)"),
                    "404": fail("no such run or checkpoint (STATE_NOT_FOUND)"),
                    "409": fail("the run waits at no gate, or has moved on from that checkpoint (INVALID_STATE)")
                }))
            } },
            "/api/agent/cancel": { "post": {
                "operationId": "cancel",
                "summary": "Cancel a run; nothing of it is applied",
                "requestBody": json_body(&cancel),
                "responses": common(json!({
                    "200": ok("the run's status after the request (`running`: the process executing it stops at its next step)", &accepted),
                    "400": fail("the run is a commit pipeline's, answered under /api/pipeline (INVALID_ARGUMENT)"),
                    "404": fail("no such run (STATE_NOT_FOUND)")
                }))
            } },
            "/api/agent/state/{stateId}": { "get": {
                "operationId": "getState",
                "summary": "A checkpoint of a run and the state it holds (a run id: its latest)",
                "parameters": [string_param("stateId", "path", "a checkpoint's stateId, a run id, or a unique prefix of one")],
                "responses": common(json!({
                    "200": ok("the checkpoint", &view),
                    "400": fail("the run is a commit pipeline's, answered under /api/pipeline (INVALID_ARGUMENT)"),
                    "404": fail("no such run or checkpoint (STATE_NOT_FOUND)")
                }))
            } },
            "/api/agent/runs": { "get": {
                "operationId": "listRuns",
                "summary": "Runs, most recently updated first",
                "parameters": [
                    string_param("status", "query", "only runs with this status: queued, running, waiting, succeeded, failed, cancelled"),
                    int_param("limit", "query", "at most this many (1 to 500, default 50)"),
                    int_param("offset", "query", "skip this many (the previous page's nextOffset)")
                ],
                "responses": common(json!({
                    "200": ok("a page of runs", &page),
                    "400": fail("a bad filter (INVALID_ARGUMENT)")
                }))
            } },
            "/api/agent/runs/{id}/events": { "get": {
                "operationId": "runEvents",
                "summary": "A run's events: the stored ones after Last-Event-ID, then new ones until the run finishes",
                "parameters": [
                    string_param("id", "path", "a run id, a unique prefix of one, or a stateId"),
                    string_param("Last-Event-ID", "header", "resume after this event (its seq)"),
                    int_param("after", "query", "resume after this event (Last-Event-ID wins)"),
                    { "name": "follow", "in": "query", "required": false,
                      "description": "false: end after the events stored now",
                      "schema": { "type": "boolean" } }
                ],
                "responses": common(json!({
                    "200": stream("the run's events"),
                    "400": fail("the run is a commit pipeline's, answered under /api/pipeline (INVALID_ARGUMENT)"),
                    "404": fail("no such run (STATE_NOT_FOUND)")
                }))
            } },
            "/api/pipeline/approve": { "post": {
                "operationId": "pipelineApprove",
                "summary": "Answer the approval a commit pipeline waits at (yes: the next stage; no: roll back)",
                "requestBody": json_body(&pipeline_approve),
                "responses": common(json!({
                    "202": ok("the answer is queued; a worker drives the pipeline on", &accepted),
                    "400": fail("the run is not a pipeline run (INVALID_ARGUMENT)"),
                    "404": fail("no such run or checkpoint (STATE_NOT_FOUND)"),
                    "409": fail("the pipeline waits at no approval, or has moved on from that checkpoint (INVALID_STATE)")
                }))
            } },
            "/api/pipeline/cancel": { "post": {
                "operationId": "pipelineCancel",
                "summary": "Cancel a commit pipeline; nothing more is pushed, a waiting one's hub branches are deleted",
                "requestBody": json_body(&cancel),
                "responses": common(json!({
                    "200": ok("the run's status after the request", &accepted),
                    "400": fail("the run is not a pipeline run (INVALID_ARGUMENT)"),
                    "404": fail("no such run (STATE_NOT_FOUND)")
                }))
            } },
            "/api/pipeline/state/{stateId}": { "get": {
                "operationId": "getPipelineState",
                "summary": "A checkpoint of a commit pipeline and the state it holds (a run id: its latest)",
                "parameters": [string_param("stateId", "path", "a checkpoint's stateId, a run id, or a unique prefix of one")],
                "responses": common(json!({
                    "200": ok("the checkpoint", &pipeline_view),
                    "400": fail("the run is not a pipeline run (INVALID_ARGUMENT)"),
                    "404": fail("no such run or checkpoint (STATE_NOT_FOUND)")
                }))
            } },
            "/api/pipeline/runs": { "get": {
                "operationId": "listPipelineRuns",
                "summary": "Commit pipeline runs (kind `pipeline`), most recently updated first",
                "parameters": [
                    string_param("status", "query", "only runs with this status: queued, running, waiting, succeeded, failed, cancelled"),
                    int_param("limit", "query", "at most this many (1 to 500, default 50)"),
                    int_param("offset", "query", "skip this many (the previous page's nextOffset)")
                ],
                "responses": common(json!({
                    "200": ok("a page of runs; `request` is the commit message", &page),
                    "400": fail("a bad filter (INVALID_ARGUMENT)")
                }))
            } },
            "/api/pipeline/runs/{id}/events": { "get": {
                "operationId": "pipelineRunEvents",
                "summary": "A commit pipeline's events: the stored ones after Last-Event-ID, then new ones until it finishes",
                "parameters": [
                    string_param("id", "path", "a run id, a unique prefix of one, or a stateId"),
                    string_param("Last-Event-ID", "header", "resume after this event (its seq)"),
                    int_param("after", "query", "resume after this event (Last-Event-ID wins)"),
                    { "name": "follow", "in": "query", "required": false,
                      "description": "false: end after the events stored now",
                      "schema": { "type": "boolean" } }
                ],
                "responses": common(json!({
                    "200": stream("the run's events"),
                    "400": fail("the run is not a pipeline run (INVALID_ARGUMENT)"),
                    "404": fail("no such run (STATE_NOT_FOUND)")
                }))
            } },
            "/api/openapi.json": { "get": {
                "operationId": "openapi",
                "summary": "This document",
                "responses": common(json!({
                    "200": { "description": "the OpenAPI document", "content": { "application/json": { "schema": { "type": "object" } } } }
                }))
            } }
        },
        "components": {
            "schemas": schemas,
            "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer" } },
            "x-event-schemas": { "runEvent": event, "stateUpdate": update }
        }
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_reference_resolves() {
        let doc = super::openapi();
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        for name in [
            "ExecuteRequest",
            "ApproveRequest",
            "RunView",
            "RunEvent",
            "StateUpdate",
            "ErrorInfo",
            "PipelineApproveRequest",
            "PipelineRunView",
        ] {
            assert!(schemas.contains_key(name), "{name} missing");
        }
        let text = doc.to_string();
        let mut rest = text.as_str();
        while let Some(i) = rest.find("\"$ref\":\"") {
            rest = &rest[i + 8..];
            let end = rest.find('"').unwrap();
            let name = rest[..end]
                .strip_prefix("#/components/schemas/")
                .unwrap_or_else(|| panic!("{}", &rest[..end]));
            assert!(schemas.contains_key(name), "dangling {name}");
        }
    }
}
