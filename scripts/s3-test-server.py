#!/usr/bin/env python3
"""An S3 server on 127.0.0.1 for the remote-folder tests (Spec/remote.md 10, 11).

    s3-test-server.py DATES.json FOLDER...

Starts moto's server (moto[server] 5.2.1, in this process) on an ephemeral port, and through it,
with boto3, creates an IAM user with an access key allowed everything, and uploads:
  - bucket `golden`: the `cloud` folders of each FOLDER under its name (`golden/merge/...`),
    and a copy of verify/healthy/cloud under `dated/` whose objects carry dates of their own
    (1,600,000,000 + 3,601 s per key, in key order), written to DATES.json as key -> seconds, as
    boto3 lists them;
  - bucket `names`: keys with spaces and Unicode, and unsafe keys (`..`, `.`, empty segments,
    the manifest's name, a name both file and folder, a name over 255 bytes), and a folder
    marker `dir/`.
Then it turns moto's request authentication on (signatures checked against the IAM key) and
prints `PORT ACCESS-KEY-ID SECRET` on one line. It ends when its standard input closes.

moto 5.2.1 checks a signature against the request's URL after decoding it (`prefix=a/` where
`prefix=a%2F` was sent and signed), which AWS does not do and which fails boto3's own requests
(a ListObjectsV2 with the prefix `dated/` is refused as SignatureDoesNotMatch). The server here
hands moto's check the URL as received instead (werkzeug's REQUEST_URI), as AWS checks it.
"""
import concurrent.futures
import datetime
import json
import os
import sys
import threading

import logging

import boto3
from moto import settings
from moto.core import DEFAULT_ACCOUNT_ID
from moto.core.authorization import ActionAuthenticatorMixin
from moto.s3.models import s3_backends
from moto.server import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import make_server

RAW = threading.local()


def check_as_received(original):
    """moto's signature check, on the path and query exactly as the client sent them."""

    def check(self, iam_request_cls, resource="*"):
        saved, raw = self.uri, getattr(RAW, "uri", None)
        if raw:
            self.uri = raw
        try:
            return original(self, iam_request_cls, resource)
        finally:
            self.uri = saved

    return check

NAMES = {
    "with space": b"space",
    "\u00fcn\u00efcode\u2014\u65e5": b"unicode",
    "../escape": b"x",
    # A slash and a combining mark are one character: split at characters, `..` hid in one piece.
    "../\u0301escape": b"x",
    "a/../b": b"x",
    "x//y": b"x",
    "./dot": b"x",
    "/leading": b"x",
    ".logtool-fetch.json": b"{}",
    "conflict": b"file",
    "conflict/inner": b"x",
    "l" * 256: b"x",
    "dir/": b"",
}


def main(dates_path, folders):
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    ActionAuthenticatorMixin._authenticate_and_authorize_action = check_as_received(ActionAuthenticatorMixin._authenticate_and_authorize_action)
    app = DomainDispatcherApplication(create_backend_app)

    def keep_raw_uri(environ, start_response):
        RAW.uri = environ.get("REQUEST_URI") or environ.get("RAW_URI")
        return app(environ, start_response)

    server = make_server("127.0.0.1", 0, keep_raw_uri, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_port
    endpoint = f"http://127.0.0.1:{port}"
    common = dict(endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="setup", aws_secret_access_key="setup")
    iam = boto3.client("iam", **common)
    iam.create_user(UserName="tester")
    iam.put_user_policy(
        UserName="tester",
        PolicyName="all",
        PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}),
    )
    key = iam.create_access_key(UserName="tester")["AccessKey"]
    s3 = boto3.client("s3", **common)
    s3.create_bucket(Bucket="golden")
    s3.create_bucket(Bucket="names")
    uploads = []
    for folder in folders:
        base = os.path.basename(os.path.normpath(folder))
        for root, _, files in os.walk(folder):
            for name in files:
                path = os.path.join(root, name)
                relative = os.path.relpath(path, folder)
                # The cloud folders alone: the tests read nothing else of a case.
                if "cloud" in relative.split(os.sep):
                    uploads.append(("golden", base + "/" + relative, path))
    healthy = os.path.join(folders[-1], "healthy", "cloud") if folders else None
    dated = []
    if healthy and os.path.isdir(healthy):
        for root, _, files in os.walk(healthy):
            for name in files:
                path = os.path.join(root, name)
                dated.append("dated/" + os.path.relpath(path, healthy))
                uploads.append(("golden", dated[-1], path))

    def put(item):
        bucket, name, path = item
        with open(path, "rb") as f:
            s3.put_object(Bucket=bucket, Key=name, Body=f.read())

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        list(pool.map(put, uploads))
    for name, body in NAMES.items():
        s3.put_object(Bucket="names", Key=name, Body=body)
    # Dates of their own on the dated copy: moto dates an object when it is put.
    bucket = s3_backends[DEFAULT_ACCOUNT_ID]["aws"].buckets["golden"]
    for index, name in enumerate(sorted(dated)):
        stamp = datetime.datetime.fromtimestamp(1_600_000_000 + index * 3_601, datetime.timezone.utc).replace(tzinfo=None)
        bucket.keys[name].last_modified = stamp
    listed = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket="golden", Prefix="dated/"):
        for item in page.get("Contents", []):
            listed[item["Key"]] = int(item["LastModified"].timestamp())
    with open(dates_path, "w") as f:
        json.dump(listed, f)
    # From here every request must be signed with the tester's key.
    settings.INITIAL_NO_AUTH_ACTION_COUNT = 0
    ActionAuthenticatorMixin.request_count = 0
    print(port, key["AccessKeyId"], key["SecretAccessKey"], flush=True)
    sys.stdin.buffer.read()
    os._exit(0)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
