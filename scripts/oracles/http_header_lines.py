"""Oracle for Kiln's header-line parser (HTTPHeader): reads raw HTTP header bytes (the file named by argv[1]),
parses them with Python's http.client.parse_headers, and prints [[name, value], ...] as JSON. http.client reads
header bytes as ISO-8859-1; each value is turned back into its bytes and read as UTF-8 where it is valid UTF-8,
which is the rule Kiln documents for header text."""
import http.client, io, json, sys

raw = open(sys.argv[1], "rb").read()
message = http.client.parse_headers(io.BytesIO(raw))
fields = []
for name, value in message.items():
    data = value.encode("iso-8859-1")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("iso-8859-1")
    fields.append([name, text.strip(" \t")])
print(json.dumps(fields, ensure_ascii=False))
