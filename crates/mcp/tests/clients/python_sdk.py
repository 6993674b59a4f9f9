"""Drives `ironbees mcp` with the official Python MCP SDK (PyPI `mcp`), a client
nobody here wrote. Run by crates/cli/tests/suite/mcp.rs (stdio) and serve.rs
(`ironbees serve`'s `/mcp`, MCP's streamable HTTP transport, with its token):

    python3 python_sdk.py IRONBEES_BIN PROJECT_DIR
    python3 python_sdk.py --http URL TOKEN PROJECT_DIR

The project holds src/app.py and src/util.py (see the Rust test). Every step
asserts what a user of the server would notice; the first failed assertion exits
non-zero with a message on stderr. Results are dumped with `by_alias=True` so the
wire names (isError, structuredContent, inputSchema) are used whatever the SDK
version calls its attributes.
"""

import asyncio
import hashlib
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

PILLARS = ["understand", "change", "navigate", "read", "write", "manage"]
COMPAT = [
    "search_project",
    "read_code",
    "edit_code",
    "analyze_relationship",
    "list_directory",
    "get_hierarchy",
    "manage_project",
]


def fail(msg):
    print(f"python_sdk client: {msg}", file=sys.stderr, flush=True)
    # Not sys.exit: inside the SDK's task groups that becomes a traceback wall.
    # The server sees stdin close and exits on its own.
    os._exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def wire(model):
    return model.model_dump(by_alias=True, exclude_none=True)


def resolve(schema, node):
    """Follows a local `$ref` (schemars puts nested types in `$defs`)."""
    seen = 0
    while isinstance(node, dict) and "$ref" in node and seen < 10:
        ref = node["$ref"]
        check(ref.startswith("#/"), f"non-local $ref {ref}")
        target = schema
        for part in ref[2:].split("/"):
            target = target[part]
        node = target
        seen += 1
    # Option<T> is rendered as anyOf [T, null] by some schemars versions.
    if isinstance(node, dict) and "anyOf" in node:
        for alt in node["anyOf"]:
            if alt.get("type") != "null":
                return resolve(schema, alt)
    return node


def props(schema, node):
    return resolve(schema, node).get("properties", {})


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def text_of(result):
    return "\n".join(c.get("text", "") for c in result.get("content", []))


async def call(session, name, args):
    return wire(await session.call_tool(name, args))


async def main(binary, project):
    params = StdioServerParameters(
        command=binary,
        args=["-C", project, "mcp", "--no-watch"],
        env={"XDG_CONFIG_HOME": os.path.join(project, ".no-user-config")},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await exercise(session, project)
    print("python_sdk client: ok")


async def main_http(url, token, project):
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    # Without the token: refused before MCP starts.
    async with create_mcp_http_client() as bare:
        r = await bare.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        check(r.status_code == 401, f"no token: HTTP {r.status_code}")
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http:
        async with streamable_http_client(url, http_client=http) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                await exercise(session, project)
    print("python_sdk client: ok")


async def exercise(session, project):
    app = os.path.join(project, "src", "app.py")
    original = open(app, "rb").read()
    init = wire(await session.initialize())
    check(init["serverInfo"]["name"] == "ironbees", f"server info: {init['serverInfo']}")
    check("tools" in init["capabilities"], "tools capability missing")

    # --- tools/list: names and input schemas as in the issue ---------
    tools = {t["name"]: t for t in (wire(t) for t in (await session.list_tools()).tools)}
    for name in PILLARS + COMPAT:
        check(name in tools, f"tool {name} missing from {sorted(tools)}")
        check(tools[name].get("description"), f"tool {name} has no description")
    schema = {n: t["inputSchema"] for n, t in tools.items()}
    u = schema["understand"]
    check({"target", "depth", "include"} <= set(u["properties"]), f"understand: {u['properties'].keys()}")
    check("target" in u.get("required", []), "understand.target must be required")
    c = schema["change"]
    check({"description", "edits", "options"} <= set(c["properties"]), f"change: {c['properties'].keys()}")
    edit = props(c, resolve(c, c["properties"]["edits"])["items"])
    for k in ["targetString", "replacementString", "lineRange", "expectedHash"]:
        check(k in edit, f"change.edits[] lacks {k}: {sorted(edit)}")
    opts = props(c, c["properties"]["options"])
    for k in ["dryRun", "includeImpact", "autoRollback"]:
        check(k in opts, f"change.options lacks {k}: {sorted(opts)}")
    check("command" in schema["manage"]["properties"], "manage.command missing")
    check({"action", "target"} <= set(schema["navigate"]["properties"]), "navigate schema")
    check("target" in schema["read"]["properties"], "read.target missing")
    check("path" in schema["write"]["properties"], "write.path missing")

    # --- understand a file -------------------------------------------
    r = await call(session, "understand", {"target": "src/app.py", "depth": "shallow"})
    check(not r.get("isError"), f"understand failed: {text_of(r)}")
    s = r["structuredContent"]
    check(s["resolvedAs"] == "path", f"understand resolvedAs {s['resolvedAs']}")
    f0 = s["files"][0]
    check(f0["path"] == "src/app.py", f"understand file {f0['path']}")
    check(f0["hash"] == sha256(app), "understand hash is not the file's sha256")
    names = json.dumps(s)
    check("handle" in names and "health" in names, "understand lacks the file's functions")
    check("util" in names, "understand lacks the dependency on src/util.py")
    check(s["guidance"]["nextActions"], "understand has no next actions")

    # --- read ---------------------------------------------------------
    r = await call(session, "read", {"target": "src/app.py"})
    check(not r.get("isError"), f"read failed: {text_of(r)}")
    h0 = r["structuredContent"]["hash"]
    check(h0 == sha256(app), "read hash is not the file's sha256")
    check(r["structuredContent"]["content"] == original.decode(), "read content differs from disk")

    edit = {
        "path": "src/app.py",
        "targetString": "respond(request, 200)",
        "replacementString": "respond(request, 201)",
        "expectedHash": h0,
    }
    # --- change: dry run (default) writes nothing -----------------------
    r = await call(session, "change", {"description": "201 for handle", "edits": [edit], "options": {"includeImpact": True}})
    check(not r.get("isError"), f"dry run failed: {text_of(r)}")
    s = r["structuredContent"]
    check(s["dryRun"] is True and s["success"] is True, f"dry run: {s['dryRun']} {s['success']}")
    check("transactionId" not in s, "a dry run has no transaction")
    check("201" in json.dumps(s["editResult"]), "dry run shows no diff")
    check(open(app, "rb").read() == original, "a dry run wrote the file")

    # --- change: apply -------------------------------------------------
    r = await call(session, "change", {"description": "201 for handle", "edits": [edit], "options": {"dryRun": False, "autoRollback": True}})
    check(not r.get("isError"), f"apply failed: {text_of(r)}")
    s = r["structuredContent"]
    check(s["success"] is True and s["dryRun"] is False, "apply did not succeed")
    tx = s.get("transactionId")
    check(tx, "apply has no transactionId")
    on_disk = open(app, "rb").read().decode()
    check("respond(request, 201)" in on_disk and "respond(request, 200)" not in on_disk, "apply did not write")

    # --- read back -------------------------------------------------------
    r = await call(session, "read", {"target": "src/app.py"})
    check(r["structuredContent"]["content"] == on_disk, "read after change differs from disk")
    h1 = r["structuredContent"]["hash"]
    check(h1 != h0 and h1 == sha256(app), "hash after change")

    # --- errors: stale hash, path outside root ---------------------------
    stale = dict(edit, targetString="respond(None, 200)", replacementString="respond(None, 204)")
    r = await call(session, "change", {"edits": [stale], "options": {"dryRun": False}})
    check(r.get("isError") is True, f"stale hash was accepted: {text_of(r)}")
    check(text_of(r).startswith("HASH_MISMATCH"), f"stale hash text: {text_of(r)[:200]}")
    check(r["structuredContent"]["guidance"]["recovery"]["code"] == "HASH_MISMATCH", "no recovery for HASH_MISMATCH")
    check(open(app, "rb").read().decode() == on_disk, "a refused change wrote the file")

    r = await call(session, "read", {"target": "../outside.txt"})
    check(r.get("isError") is True, "a path outside the root was read")
    check(text_of(r).startswith("PATH_OUTSIDE_ROOT"), f"outside text: {text_of(r)[:200]}")
    r = await call(session, "change", {"edits": [{"op": "create", "path": "../evil.py", "content": "x = 1\n"}], "options": {"dryRun": False}})
    check(r.get("isError") is True and "PATH_OUTSIDE_ROOT" in text_of(r), f"create outside root: {text_of(r)[:200]}")
    check(not os.path.exists(os.path.join(os.path.dirname(project), "evil.py")), "a file was created outside the root")

    # --- navigate ----------------------------------------------------------
    r = await call(session, "navigate", {"action": "callers", "target": "respond"})
    check(not r.get("isError"), f"navigate failed: {text_of(r)}")
    found = json.dumps(r["structuredContent"]["results"])
    check("handle" in found and "health" in found, f"callers of respond: {found[:300]}")

    # --- manage undo restores the file --------------------------------------
    r = await call(session, "manage", {"command": "undo", "id": tx})
    check(not r.get("isError"), f"undo failed: {text_of(r)}")
    check(open(app, "rb").read() == original, "undo did not restore the file byte for byte")
    r = await call(session, "manage", {"command": "history"})
    check(not r.get("isError") and r["structuredContent"]["history"], "history is empty")

    # --- write: a new file, then undone ------------------------------------
    r = await call(session, "write", {"path": "src/new_module.py", "content": "VALUE = 1\n"})
    check(not r.get("isError"), f"write failed: {text_of(r)}")
    new = os.path.join(project, "src", "new_module.py")
    check(open(new).read() == "VALUE = 1\n", "write did not create the file")
    r = await call(session, "manage", {"command": "undo"})
    check(not r.get("isError") and not os.path.exists(new), f"undo of write: {text_of(r)[:200]}")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--http":
        asyncio.run(main_http(sys.argv[2], sys.argv[3], sys.argv[4]))
    elif len(sys.argv) == 3:
        asyncio.run(main(sys.argv[1], sys.argv[2]))
    else:
        fail("usage: python_sdk.py IRONBEES_BIN PROJECT_DIR | --http URL TOKEN PROJECT_DIR")
