#!/usr/bin/env node
// An OpenAI-compatible server (`GET /v1/models`, `POST /v1/chat/completions`, JSON
// and SSE) in front of a GGUF model run on the CPU by node-llama-cpp, so ironbees'
// `llm` client can be pointed at a real small model with OPENAI_BASE_URL. Not a
// product: one model, one context, requests served one at a time (a second request
// waits; the KV cache of the previous conversation is reused for a shared prefix,
// which is what makes a coder's second call cheaper than its first).
//
//   node scripts/local_model_server.mjs --prefix DIR --model FILE.gguf [--port 8089]
//       [--threads 2] [--context 8192] [--temperature 0.8] [--seed N] [--name qwen] [--log FILE]
//
// DIR is where node-llama-cpp was installed (`npm install --prefix DIR`);
// scripts/agent_local_model.sh installs it into target/local-model.
//
// `tools` become node-llama-cpp functions (the chat wrapper puts them in the
// prompt in the model's own format and a grammar holds the call to the schema);
// a function call ends the generation and is answered as `tool_calls`. JSON
// Schema features node-llama-cpp's grammar lacks are dropped (see `gbnfSchema`),
// and every property it keeps is required by the grammar, so only the schema's
// required properties are kept. `response_format: json_schema` becomes a grammar.
// A client that hangs up (a timeout) stops its generation. A request without
// `max_tokens` (ironbees sends none to compatible servers) gets 1,024: llama.cpp's
// server would generate until the context is full, which a 0.5B model that
// repeats itself does, for many minutes on a CPU.

import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const args = Object.fromEntries(
    process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const MODEL = args.model;
const PORT = Number(args.port ?? 8089);
const THREADS = Number(args.threads ?? 2);
const CONTEXT = Number(args.context ?? 8192);
const NAME = args.name ?? "qwen";
// For a request without `temperature`: llama.cpp's server samples at 0.8 by default.
const TEMPERATURE = Number(args.temperature ?? 0.8);
const SEED = args.seed === undefined ? undefined : Number(args.seed);
const LOG = args.log;
if (!MODEL || !args.prefix) {
    console.error("usage: local_model_server.mjs --prefix DIR --model FILE.gguf [--port N] [--threads N] [--context N] [--name ID]");
    process.exit(2);
}

// The package lives in a prefix outside the repository, and an ES module import
// does not search NODE_PATH: import its entry point by path.
const entry = path.resolve(args.prefix, "node_modules", "node-llama-cpp", "dist", "index.js");
const { getLlama, LlamaChat } = await import(pathToFileURL(entry).href);

function log(entry) {
    const line = JSON.stringify({ time: new Date().toISOString(), ...entry });
    console.error(line);
    if (LOG) fs.appendFileSync(LOG, line + "\n");
}

const llama = await getLlama({ gpu: false, build: "never" });
const model = await llama.loadModel({ modelPath: MODEL });
const context = await model.createContext({ contextSize: CONTEXT, threads: THREADS });
const sequence = context.getSequence();
const chat = new LlamaChat({ contextSequence: sequence });
log({ event: "ready", model: MODEL, chatWrapper: chat.chatWrapper.wrapperName, contextSize: context.contextSize, threads: THREADS, port: PORT });

// --- schemas ---------------------------------------------------------------------------

/** The part of a JSON Schema node-llama-cpp's grammar understands; `defs` resolves `$ref`. */
function gbnfSchema(s, defs, depth = 0) {
    if (s === true || s == null || typeof s !== "object" || depth > 12) return { type: ["string", "number", "boolean", "null"] };
    if (s.$ref) {
        const name = s.$ref.split("/").pop();
        return gbnfSchema(defs[name], defs, depth + 1);
    }
    const out = s.description ? { description: s.description } : {};
    if ("const" in s) return { ...out, const: s.const };
    if (Array.isArray(s.enum)) return { ...out, enum: s.enum };
    const alts = s.oneOf ?? s.anyOf;
    if (Array.isArray(alts)) return { ...out, oneOf: alts.map((a) => gbnfSchema(a, defs, depth + 1)) };
    if (Array.isArray(s.allOf) && s.allOf.length === 1) return gbnfSchema(s.allOf[0], defs, depth + 1);
    let type = s.type;
    if (Array.isArray(type)) {
        // ["object", "null"] and the like: the non-null alternative carries the shape.
        const real = type.filter((t) => t !== "null");
        if (real.length === 1 && (real[0] === "object" || real[0] === "array")) return gbnfSchema({ ...s, type: real[0] }, defs, depth);
        return { ...out, type: type.filter((t) => ["string", "number", "integer", "boolean", "null"].includes(t)) };
    }
    if (type === undefined) type = s.properties ? "object" : s.items ? "array" : undefined;
    switch (type) {
        case "object": {
            const required = new Set(s.required ?? []);
            const properties = {};
            for (const [k, v] of Object.entries(s.properties ?? {})) {
                if (required.has(k)) properties[k] = gbnfSchema(v, defs, depth + 1);
            }
            return { ...out, type: "object", properties };
        }
        case "array": {
            const a = { ...out, type: "array", items: gbnfSchema(s.items ?? true, defs, depth + 1) };
            if (Number.isInteger(s.minItems)) a.minItems = s.minItems;
            if (Number.isInteger(s.maxItems)) a.maxItems = s.maxItems;
            return a;
        }
        case "string":
        case "number":
        case "integer":
        case "boolean":
        case "null":
            return { ...out, type };
        default:
            return { ...out, type: ["string", "number", "boolean", "null"] };
    }
}

function functionsOf(tools) {
    const functions = {};
    for (const t of tools ?? []) {
        const f = t.function ?? t;
        const params = f.parameters ?? {};
        functions[f.name] = { description: f.description ?? "", params: gbnfSchema(params, params.$defs ?? params.definitions ?? {}) };
    }
    return functions;
}

// --- messages --------------------------------------------------------------------------

function textOf(content) {
    if (content == null) return "";
    if (typeof content === "string") return content;
    return content.map((p) => (typeof p === "string" ? p : p.text ?? "")).join("");
}

/** OpenAI messages as node-llama-cpp's chat history; tool results join their calls. */
function historyOf(messages) {
    const history = [];
    const calls = new Map(); // tool_call_id -> the history's function call item
    for (const m of messages) {
        if (m.role === "system" || m.role === "developer") history.push({ type: "system", text: textOf(m.content) });
        else if (m.role === "user") history.push({ type: "user", text: textOf(m.content) });
        else if (m.role === "assistant") {
            const response = [];
            const text = textOf(m.content);
            if (text) response.push(text);
            for (const c of m.tool_calls ?? []) {
                let params;
                try {
                    params = JSON.parse(c.function.arguments || "{}");
                } catch {
                    params = c.function.arguments;
                }
                const item = { type: "functionCall", name: c.function.name, params, result: "" };
                calls.set(c.id, item);
                response.push(item);
            }
            history.push({ type: "model", response });
        } else if (m.role === "tool") {
            const item = calls.get(m.tool_call_id);
            if (item) item.result = textOf(m.content);
            else history.push({ type: "user", text: `Tool result: ${textOf(m.content)}` });
        }
    }
    // Generation continues the last model response (after tool results) or a new one.
    const last = history[history.length - 1];
    const continues = last?.type === "model" && last.response.some((r) => r?.type === "functionCall");
    if (!continues) history.push({ type: "model", response: [] });
    return history;
}

/** `{"name": F, "arguments": {...}}` (fenced or bare, `parameters` too) naming a known function. */
function textToolCall(text, functions) {
    const body = (text.match(/```(?:json)?\s*([\s\S]*?)```/)?.[1] ?? text).trim();
    const start = body.indexOf("{");
    const end = body.lastIndexOf("}");
    if (start < 0 || end <= start) return null;
    let v;
    try {
        v = JSON.parse(body.slice(start, end + 1));
    } catch {
        return null;
    }
    const name = v?.name ?? v?.function?.name;
    if (typeof name !== "string" || !(name in functions)) return null;
    let params = v.arguments ?? v.parameters ?? v.function?.arguments ?? {};
    if (typeof params === "string") {
        try {
            params = JSON.parse(params);
        } catch {
            return null;
        }
    }
    return { name, params };
}

// --- serving ---------------------------------------------------------------------------

let queue = Promise.resolve();
let nextId = 0;

async function complete(body, onText, signal) {
    const history = historyOf(body.messages ?? []);
    const options = {
        maxTokens: body.max_tokens ?? body.max_completion_tokens ?? 1024,
        temperature: body.temperature ?? TEMPERATURE,
        seed: body.seed ?? SEED,
        onTextChunk: onText,
        signal,
        stopOnAbortSignal: true,
    };
    const format = body.response_format;
    if (format?.type === "json_schema" && format.json_schema?.schema) {
        const s = format.json_schema.schema;
        options.grammar = await llama.createGrammarForJsonSchema(gbnfSchema(s, s.$defs ?? s.definitions ?? {}));
    } else if (format?.type === "json_object") {
        options.grammar = await llama.getGrammarFor("json");
    } else if (body.tools?.length && body.tool_choice !== "none") {
        options.functions = functionsOf(body.tools);
        options.documentFunctionParams = true;
        options.maxParallelFunctionCalls = 1;
    }
    const before = sequence.tokenMeter.getState();
    const res = await chat.generateResponse(history, options);
    const after = sequence.tokenMeter.getState();
    const usage = {
        prompt_tokens: after.usedInputTokens - before.usedInputTokens,
        completion_tokens: after.usedOutputTokens - before.usedOutputTokens,
    };
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    let calls = (res.functionCalls ?? []).map((c) => ({ name: c.functionName, params: c.params }));
    let text = res.response;
    let from = calls.length ? "native" : null;
    if (!calls.length && options.functions) {
        // Small models often write the call as JSON text (in a fence) instead of the
        // chat template's syntax; read it back as a call when it names a known
        // function, as Ollama's and llama.cpp's servers do with such output.
        const parsed = textToolCall(text, options.functions);
        if (parsed) [calls, text, from] = [[parsed], "", "text"];
    }
    const toolCalls = calls.map((c, i) => ({
        id: `call_local_${nextId}_${i}`,
        type: "function",
        function: { name: c.name, arguments: JSON.stringify(c.params ?? {}) },
    }));
    const finish = toolCalls.length ? "tool_calls" : res.metadata.stopReason === "maxTokens" ? "length" : "stop";
    return { text, toolCalls, finish, usage, from };
}

function send(res, status, obj) {
    const data = JSON.stringify(obj);
    res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(data) });
    res.end(data);
}

async function chatCompletions(req, res, body) {
    const id = `chatcmpl-local${++nextId}`;
    const created = Math.floor(Date.now() / 1000);
    const started = Date.now();
    const chunk = (delta, finish, extra = {}) =>
        `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: NAME, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
    let firstTokenMs = null;
    // Headers at once, the first chunk with the first token, as llama.cpp's server
    // does: so a client's first-token timeout measures the prompt's evaluation.
    const begin = () => {
        if (firstTokenMs !== null) return;
        firstTokenMs = Date.now() - started;
        if (body.stream) res.write(chunk({ role: "assistant", content: "" }, null));
    };
    const onText = (text) => {
        begin();
        if (body.stream && text) res.write(chunk({ content: text }, null));
    };
    if (body.stream) res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
    const abort = new AbortController();
    res.on("close", () => {
        if (!res.writableFinished) abort.abort();
    });
    let out;
    try {
        out = await complete(body, onText, abort.signal);
    } catch (e) {
        log({ event: "error", id, error: String(e?.stack ?? e) });
        if (body.stream) {
            res.write(`data: ${JSON.stringify({ error: { message: String(e?.message ?? e), type: "server_error" } })}\n\n`);
            return res.end();
        }
        return send(res, 500, { error: { message: String(e?.message ?? e), type: "server_error" } });
    }
    log({
        event: "completion", id, aborted: abort.signal.aborted, stream: !!body.stream, messages: body.messages?.length, tools: body.tools?.length ?? 0,
        ms: Date.now() - started, firstTokenMs, usage: out.usage, finish: out.finish, toolCallsFrom: out.from,
        toolCalls: out.toolCalls.map((c) => c.function.name), text: out.text.slice(0, 300),
    });
    if (body.stream) {
        begin();
        out.toolCalls.forEach((c, index) => {
            res.write(chunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.function.name, arguments: "" } }] }, null));
            res.write(chunk({ tool_calls: [{ index, function: { arguments: c.function.arguments } }] }, null));
        });
        res.write(chunk({}, out.finish));
        if (body.stream_options?.include_usage) {
            res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: NAME, choices: [], usage: out.usage })}\n\n`);
        }
        res.write("data: [DONE]\n\n");
        return res.end();
    }
    const message = { role: "assistant", content: out.text || null };
    if (out.toolCalls.length) message.tool_calls = out.toolCalls;
    send(res, 200, { id, object: "chat.completion", created, model: NAME, choices: [{ index: 0, message, finish_reason: out.finish }], usage: out.usage });
}

const server = http.createServer((req, res) => {
    const url = req.url.replace(/\/+$/, "");
    if (req.method === "GET" && url === "/v1/models") {
        return send(res, 200, { object: "list", data: [{ id: NAME, object: "model", created: 0, owned_by: "local" }] });
    }
    if (req.method !== "POST" || url !== "/v1/chat/completions") {
        return send(res, 404, { error: { message: `no ${req.method} ${req.url}`, type: "not_found" } });
    }
    let raw = "";
    req.on("data", (d) => (raw += d));
    req.on("end", () => {
        let body;
        try {
            body = JSON.parse(raw);
        } catch (e) {
            return send(res, 400, { error: { message: `not JSON: ${e.message}`, type: "invalid_request_error" } });
        }
        // One generation at a time on the one context; a client that gave up is skipped.
        queue = queue.then(() => (res.destroyed ? undefined : chatCompletions(req, res, body))).catch((e) => log({ event: "error", error: String(e) }));
    });
});
server.listen(PORT, "127.0.0.1", () => log({ event: "listening", url: `http://127.0.0.1:${PORT}/v1` }));
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(0));
