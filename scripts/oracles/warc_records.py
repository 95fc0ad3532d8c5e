"""warcio's reading and writing of WARC files, the oracle of WARCCommandTests.

  warc_records.py read FILE...
      Reads every record with warcio (digests checked: a record whose digest does not match fails the script) and
      prints JSON: [{"file", "type", "uri", "status", "profile", "refersToURI", "refersToDate", "concurrentTo", "id",
      "payloadSHA256" (of the body warcio hands out, Content-Encoding decoded), "headers" {name: value}}, ...].
  warc_records.py write OUT  (JSON on stdin: [{"type": "response"|"resource"|"revisit", "uri", "date",
      "status", "headers" [[name, value], ...], "body" (text), "gzip" (bool: Content-Encoding gzip),
      "chunked" (bool: Transfer-Encoding chunked), "contentType" (resource), "profile", "refersToURI",
      "refersToDate", "refersToBody" (revisit: the body whose digest it repeats)}, ...])
      Writes those records with warcio's own writer, which computes the digests.
"""
import gzip
import hashlib
import io
import json
import sys

from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter


def read(paths):
    records = []
    for path in paths:
        with open(path, "rb") as stream:
            iterator = ArchiveIterator(stream, check_digests="raise")
            for record in iterator:
                headers = record.rec_headers
                entry = {
                    "file": path,
                    "type": record.rec_type,
                    "uri": headers.get_header("WARC-Target-URI"),
                    "id": headers.get_header("WARC-Record-ID"),
                    "profile": headers.get_header("WARC-Profile"),
                    "refersToURI": headers.get_header("WARC-Refers-To-Target-URI"),
                    "refersToDate": headers.get_header("WARC-Refers-To-Date"),
                    "concurrentTo": headers.get_header("WARC-Concurrent-To"),
                    "status": None,
                    "headers": {},
                }
                if record.http_headers is not None and record.rec_type in ("response", "revisit"):
                    entry["status"] = int(record.http_headers.get_statuscode())
                    entry["headers"] = {name: value for name, value in record.http_headers.headers}
                body = record.content_stream().read()
                entry["payloadSHA256"] = hashlib.sha256(body).hexdigest()
                records.append(entry)
    json.dump(records, sys.stdout)


def chunked(data):
    out = b""
    for start in range(0, len(data), 7):
        piece = data[start:start + 7]
        out += b"%x;ext=1\r\n" % len(piece) + piece + b"\r\n"
    return out + b"0\r\nX-Trailer: t\r\n\r\n"


def write(path, specs):
    with open(path, "wb") as output:
        writer = WARCWriter(output, gzip=path.endswith(".gz"))
        for spec in specs:
            warc_headers = {"WARC-Date": spec["date"]}
            if spec["type"] == "resource":
                record = writer.create_warc_record(spec["uri"], "resource", payload=io.BytesIO(spec["body"].encode()),
                                                   warc_content_type=spec.get("contentType", "text/plain"),
                                                   warc_headers_dict=warc_headers)
                writer.write_record(record)
                continue
            body = spec.get("body", "").encode()
            headers = [tuple(pair) for pair in spec.get("headers", [])]
            if spec.get("gzip"):
                body = gzip.compress(body, mtime=0)
                headers.append(("Content-Encoding", "gzip"))
            if spec.get("chunked"):
                body = chunked(body)
                headers.append(("Transfer-Encoding", "chunked"))
            else:
                headers.append(("Content-Length", str(len(body))))
            status = spec.get("status", 200)
            http_headers = StatusAndHeaders("%d %s" % (status, "OK" if status == 200 else "Status"), headers, protocol="HTTP/1.1")
            if spec["type"] == "revisit":
                digest = "sha1:" + __import__("base64").b32encode(hashlib.sha1(spec["refersToBody"].encode()).digest()).decode()
                record = writer.create_revisit_record(spec["uri"], digest, spec["refersToURI"], spec["refersToDate"],
                                                      http_headers=http_headers, warc_headers_dict=warc_headers)
                if spec.get("profile"):
                    record.rec_headers.replace_header("WARC-Profile", spec["profile"])
            else:
                record = writer.create_warc_record(spec["uri"], "response", payload=io.BytesIO(body),
                                                   http_headers=http_headers, warc_headers_dict=warc_headers)
            writer.write_record(record)


if __name__ == "__main__":
    if sys.argv[1] == "read":
        read(sys.argv[2:])
    else:
        write(sys.argv[2], json.load(sys.stdin))
