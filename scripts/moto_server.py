"""moto_server with each S3 and DynamoDB request applied atomically.

moto's own `moto_server` runs a threaded werkzeug server and its S3 and DynamoDB backends
take no lock, so two concurrent conditional writes (`If-None-Match: *` on PutObject, a
`ConditionExpression` on PutItem/UpdateItem) can both pass their check. Real S3 and
DynamoDB apply each such write atomically, and kb-crawl's tests of exact budgets and
single winners rely on that. This launcher serialises S3 and DynamoDB requests (their
handlers never call back into moto, so this cannot deadlock) and leaves every other
service, notably Step Functions, whose executions call back into moto, fully threaded.

Usage: python moto_server.py HOST PORT
"""

import os
import re
import signal
import sys
import threading

from werkzeug.serving import run_simple

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)

SERIALISED = {"s3", "dynamodb"}
SCOPE = re.compile(r"Credential=[^/]*/[^/]*/[^/]*/([^/]+)/aws4_request")
LOCK = threading.Lock()


def service(environ):
    m = SCOPE.search(environ.get("HTTP_AUTHORIZATION", ""))
    return m.group(1) if m else None


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    os.environ.setdefault("MOTO_PORT", str(port))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    moto = DomainDispatcherApplication(create_backend_app)

    def app(environ, start_response):
        if service(environ) in SERIALISED:
            with LOCK:
                # Produce the whole body under the lock: the write happens while iterating.
                return [b"".join(moto(environ, start_response))]
        return moto(environ, start_response)

    run_simple(host, port, app, threaded=True, request_handler=MotoRequestHandler)


if __name__ == "__main__":
    main()
