"""An OTLP/gRPC receiver on the official OpenTelemetry protobufs.

The `opentelemetry-proto` package's generated messages and gRPC servicers
(`TraceService`, `MetricsService`) served by `grpcio`: nothing here decodes
bytes by hand. It listens on 127.0.0.1 on a free port and prints that port as
its first line; then every export it receives is one JSON line on stdout:
{"signal": "traces"|"metrics", "metadata": {...}, "request": <the request as
protobuf's JSON mapping, proto field names>}. It stops when stdin closes.

Installed by scripts/test: pip install --target target/test-deps/otlp-receiver
grpcio opentelemetry-proto.
"""

import json
import sys
import threading
from concurrent import futures

import grpc
from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.metrics.v1 import (
    metrics_service_pb2,
    metrics_service_pb2_grpc,
)
from opentelemetry.proto.collector.trace.v1 import (
    trace_service_pb2,
    trace_service_pb2_grpc,
)

lock = threading.Lock()


def emit(signal, request, context):
    line = json.dumps(
        {
            "signal": signal,
            "metadata": {k: v for k, v in context.invocation_metadata()},
            "request": MessageToDict(request, preserving_proto_field_name=True),
        }
    )
    with lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class Traces(trace_service_pb2_grpc.TraceServiceServicer):
    def Export(self, request, context):
        emit("traces", request, context)
        return trace_service_pb2.ExportTraceServiceResponse()


class Metrics(metrics_service_pb2_grpc.MetricsServiceServicer):
    def Export(self, request, context):
        emit("metrics", request, context)
        return metrics_service_pb2.ExportMetricsServiceResponse()


def main():
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Traces(), server)
    metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(Metrics(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    with lock:
        sys.stdout.write(f"{port}\n")
        sys.stdout.flush()
    sys.stdin.read()
    server.stop(grace=1).wait()


if __name__ == "__main__":
    main()
