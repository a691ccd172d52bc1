#!/usr/bin/python3
"""A forwarder impostor for the hostile-neighbour tests (docs/what-survives-what.md).

usage: fake_forwarder.py SOCKET STAGED_PATH LOG

Listens on SOCKET and speaks the wire protocol of src/wire/protocol.h (frames: a
little-endian uint32 length, then NUL-separated fields): HELLO -> OK, OPEN -> OK 1
STAGED_PATH -1 (a path of the attacker's choosing), anything else -> OK. Every request's
verb is appended to LOG, so a test can tell whether the victim ever talked to it.
Exits after 120 s so a failed test leaves nothing running.
"""
import os
import socket
import struct
import sys
import threading

sock_path, staged, log_path = sys.argv[1:4]


def log(line):
    with open(log_path, "a") as f:
        f.write(line + "\n")


def recv_exact(conn, n):
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def reply(conn, fields):
    payload = b"\0".join(f.encode() for f in fields)
    conn.sendall(struct.pack("<I", len(payload)) + payload)


def serve(conn):
    with conn:
        while True:
            head = recv_exact(conn, 4)
            if head is None:
                return
            payload = recv_exact(conn, struct.unpack("<I", head)[0])
            if payload is None:
                return
            fields = payload.split(b"\0")
            verb = fields[0].decode(errors="replace")
            log(verb + " " + " ".join(f.decode(errors="replace") for f in fields[1:2]))
            if verb == "OPEN":
                reply(conn, ["OK", "1", staged, "-1"])
            else:
                reply(conn, ["OK"])


srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(sock_path)
os.chmod(sock_path, 0o777)
srv.listen(16)
log("LISTENING")
threading.Timer(120, lambda: os._exit(0)).start()
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
