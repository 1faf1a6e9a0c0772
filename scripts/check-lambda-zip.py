#!/usr/bin/env python3
"""Checks the Lambda zip of scripts/build-lambda.sh and runs it once for real.

1. The zip holds one `bootstrap`: an x86-64 ELF executable whose only shared libraries are
   glibc's (libc, libm, libgcc_s, ld-linux...) and whose glibc symbol versions are at most
   2.34 (Amazon Linux 2023, provided.al2023).
2. It starts against a Lambda runtime API stand-in written here (next-invocation, response
   and error endpoints on 127.0.0.1), as the `api` handler over moto (DynamoDB job store and
   assistants table, S3, Step Functions), and answers real API Gateway HTTP API (payload
   2.0) events: a start (202), the list (200, with that job) and a request without a token
   (401).

Run with moto's venv python (it has boto3): KB_CRAWL_AWS_ENDPOINT must point at moto.
Prints figures (sizes, time to the first answer); none is asserted.
"""
import json
import os
import queue
import re
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3

ALLOWED_LIBS = re.compile(r"^(libc|libm|libgcc_s|libpthread|libdl|librt|libutil|ld-linux-x86-64)\.so(\.\d+)*$")
MAX_GLIBC = (2, 34)


def fail(msg):
    print(f"check-lambda-zip: FAILED: {msg}", file=sys.stderr)
    sys.exit(1)


def elf_facts(data):
    """(machine, type, needed libraries, glibc versions) of a 64-bit little-endian ELF."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        fail("bootstrap is not a 64-bit little-endian ELF")
    e_type, e_machine = struct.unpack_from("<HH", data, 16)
    e_shoff = struct.unpack_from("<Q", data, 0x28)[0]
    e_shentsize, e_shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = []
    for i in range(e_shnum):
        off = e_shoff + i * e_shentsize
        sh_type, = struct.unpack_from("<I", data, off + 4)
        sh_offset, sh_size = struct.unpack_from("<QQ", data, off + 0x18)
        sh_link, = struct.unpack_from("<I", data, off + 0x28)
        sections.append((sh_type, sh_offset, sh_size, sh_link))
    needed, versions = [], set()
    SHT_DYNAMIC, SHT_GNU_VERNEED = 6, 0x6FFFFFFE
    for sh_type, off, size, link in sections:
        strtab = sections[link]
        def string(i):
            start = strtab[1] + i
            return data[start:data.index(b"\0", start)].decode()
        if sh_type == SHT_DYNAMIC:
            for j in range(0, size, 16):
                tag, val = struct.unpack_from("<qQ", data, off + j)
                if tag == 1:  # DT_NEEDED
                    needed.append(string(val))
        elif sh_type == SHT_GNU_VERNEED:
            pos = off
            while True:
                _, cnt, _file, aux, nxt = struct.unpack_from("<HHIII", data, pos)
                a = pos + aux
                for _ in range(cnt):
                    _hash, _flags, _other, name, anext = struct.unpack_from("<IHHII", data, a)
                    versions.add(string(name))
                    a += anext
                if nxt == 0:
                    break
                pos += nxt
    return e_machine, e_type, needed, versions


def check_binary(path):
    data = open(path, "rb").read()
    machine, etype, needed, versions = elf_facts(data)
    if machine != 0x3E:
        fail(f"bootstrap is for machine {machine:#x}, not x86-64")
    if etype not in (2, 3):
        fail(f"bootstrap is not an executable (e_type {etype})")
    bad = [n for n in needed if not ALLOWED_LIBS.match(n)]
    if bad:
        fail(f"bootstrap needs libraries provided.al2023 may not have: {bad}")
    glibc = sorted(tuple(int(x) for x in v[6:].split(".")) for v in versions if v.startswith("GLIBC_2"))
    if not glibc:
        fail("no GLIBC symbol versions found: not a glibc build?")
    if glibc[-1] > MAX_GLIBC:
        fail(f"bootstrap needs GLIBC_{'.'.join(map(str, glibc[-1]))}, above GLIBC_{'.'.join(map(str, MAX_GLIBC))} (Amazon Linux 2023)")
    print(f"FIGURE: bootstrap {len(data) / 1e6:.1f} MB, needs {needed}, highest GLIBC_{'.'.join(map(str, glibc[-1]))}")


class Runtime(BaseHTTPRequestHandler):
    """The Lambda runtime API (2018-06-01): next invocation, response, error."""
    events = queue.Queue()
    answers = queue.Queue()

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path != "/2018-06-01/runtime/invocation/next":
            self.send_error(404)
            return
        request_id, event = Runtime.events.get()
        body = json.dumps(event).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Lambda-Runtime-Aws-Request-Id", request_id)
        self.send_header("Lambda-Runtime-Deadline-Ms", str(int(time.time() * 1000) + 30000))
        self.send_header("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:kb-crawl-api")
        self.send_header("Lambda-Runtime-Trace-Id", "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
        m = re.fullmatch(r"/2018-06-01/runtime/invocation/([^/]+)/(response|error)", self.path)
        if m:
            Runtime.answers.put((m.group(1), m.group(2), body))
        elif self.path == "/2018-06-01/runtime/init/error":
            Runtime.answers.put(("init", "error", body))
        else:
            self.send_error(404)
            return
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()


def api_event(method, path, sub=None, body=None):
    host = "abc123.execute-api.us-east-1.amazonaws.com"
    headers = {"host": host, "user-agent": "check-lambda-zip", "x-forwarded-proto": "https"}
    if body is not None:
        headers["content-type"] = "application/json"
    ctx = {
        "accountId": "123456789012", "apiId": "abc123", "domainName": host, "domainPrefix": "abc123",
        "http": {"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "203.0.113.7", "userAgent": "check-lambda-zip"},
        "requestId": uuid.uuid4().hex, "routeKey": f"{method} {path}", "stage": "$default",
        "time": "01/Dec/2026:11:00:00 +0000", "timeEpoch": int(time.time() * 1000),
    }
    if sub:
        headers["authorization"] = "Bearer eyJraWQiOiJ0ZXN0In0.e30.c2ln"
        ctx["authorizer"] = {"jwt": {"claims": {"sub": sub, "token_use": "access"}, "scopes": None}}
    return {
        "version": "2.0", "routeKey": f"{method} {path}", "rawPath": path, "rawQueryString": "",
        "headers": headers, "requestContext": ctx,
        "body": None if body is None else json.dumps(body), "isBase64Encoded": False,
    }


def aws_resources(endpoint, root):
    kw = dict(endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing")
    suffix = uuid.uuid4().hex[:8]
    ddb, s3, sfn = boto3.client("dynamodb", **kw), boto3.client("s3", **kw), boto3.client("stepfunctions", **kw)
    jobs, assistants, bucket = f"kbc-zip-jobs-{suffix}", f"kbc-zip-assistants-{suffix}", f"kbc-zip-{suffix}"
    ddb.create_table(
        TableName=jobs, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "assistant_id", "started_ns")],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[{
            "IndexName": "assistant-index", "Projection": {"ProjectionType": "ALL"},
            "KeySchema": [{"AttributeName": "assistant_id", "KeyType": "HASH"}, {"AttributeName": "started_ns", "KeyType": "RANGE"}],
        }],
    )
    ddb.create_table(
        TableName=assistants, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
    )
    ddb.put_item(TableName=assistants, Item={"id": {"S": "asst-a"}, "ownerId": {"S": "alice"}})
    s3.create_bucket(Bucket=bucket)
    definition = open(os.path.join(root, "crawl-aws/deploy/state-machine.asl.json")).read()
    definition = re.sub(r"\$\{(\w+)FunctionArn\}", lambda m: f"arn:aws:lambda:us-east-1:123456789012:function:kb-crawl-{m.group(1).lower()}", definition)
    sm = sfn.create_state_machine(name=f"kbc-zip-{suffix}", definition=definition, roleArn="arn:aws:iam::123456789012:role/kb-crawl-sfn")
    return {
        "KB_CRAWL_JOBS_TABLE": jobs, "KB_CRAWL_DEDUP_TABLE": jobs, "KB_CRAWL_ASSISTANTS_TABLE": assistants,
        "KB_CRAWL_S3_BUCKET": bucket, "KB_CRAWL_S3_PREFIX": "kb", "KB_CRAWL_STATE_MACHINE_ARN": sm["stateMachineArn"],
    }


def main():
    if len(sys.argv) != 2:
        print("usage: check-lambda-zip.py path/to/bootstrap.zip", file=sys.stderr)
        sys.exit(2)
    endpoint = os.environ.get("KB_CRAWL_AWS_ENDPOINT") or fail("KB_CRAWL_AWS_ENDPOINT not set (start moto)")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    zip_path = sys.argv[1]
    with zipfile.ZipFile(zip_path) as z:
        names = z.namelist()
        if names != ["bootstrap"]:
            fail(f"the zip should hold only bootstrap, not {names}")
        tmp = tempfile.mkdtemp(prefix="kb-crawl-zip-")
        z.extract("bootstrap", tmp)
        mode = z.getinfo("bootstrap").external_attr >> 16
    bootstrap = os.path.join(tmp, "bootstrap")
    if not mode & 0o111:
        fail("bootstrap is not executable in the zip (Lambda runs it as is)")
    os.chmod(bootstrap, 0o755)
    print(f"FIGURE: zip {os.path.getsize(zip_path) / 1e6:.1f} MB")
    check_binary(bootstrap)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Runtime)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {
        "PATH": "/usr/bin:/bin", "HOME": tmp,
        "AWS_LAMBDA_RUNTIME_API": f"127.0.0.1:{server.server_address[1]}",
        "AWS_LAMBDA_FUNCTION_NAME": "kb-crawl-api", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST", "AWS_LAMBDA_LOG_STREAM_NAME": "local", "AWS_LAMBDA_LOG_GROUP_NAME": "local",
        "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
        "KB_CRAWL_HANDLER": "api", "KB_CRAWL_AWS_ENDPOINT": endpoint,
        **aws_resources(endpoint, root),
    }
    start = ("start", api_event("POST", "/assistants/asst-a/crawl", "alice", {"url": "https://www.example.edu/", "maxDepth": 1}))
    Runtime.events.put(start)
    t0 = time.monotonic()
    proc = subprocess.Popen([bootstrap], env=env, cwd=tmp)
    try:
        def answer(request_id):
            try:
                got_id, kind, body = Runtime.answers.get(timeout=60)
            except queue.Empty:
                fail(f"no answer to {request_id} within 60 s (exit code {proc.poll()})")
            if (got_id, kind) != (request_id, "response"):
                fail(f"{request_id}: got {kind} for {got_id}: {body[:500]!r}")
            return json.loads(body)
        started = answer("start")
        print(f"FIGURE: first answer {time.monotonic() - t0:.2f} s after the process started")
        if started.get("statusCode") != 202:
            fail(f"start: {started}")
        job = json.loads(started["body"])["crawlJobId"]
        Runtime.events.put(("list", api_event("GET", "/assistants/asst-a/crawls", "alice")))
        listed = answer("list")
        ids = [c["crawlJobId"] for c in json.loads(listed["body"])["crawls"]]
        if listed.get("statusCode") != 200 or ids != [job]:
            fail(f"list: {listed}")
        Runtime.events.put(("anonymous", api_event("GET", "/assistants/asst-a/crawls")))
        anonymous = answer("anonymous")
        if anonymous.get("statusCode") != 401:
            fail(f"no token: {anonymous}")
    finally:
        proc.kill()
        proc.wait()
        server.shutdown()
    print(f"check-lambda-zip: ok: started {job} (202), listed it (200), refused no token (401)")


if __name__ == "__main__":
    main()
