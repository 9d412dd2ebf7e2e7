#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (fuzz/corpus/TARGET/), from the
conformance logs and the protocol's examples. See fuzz/README.md.

    fuzz/seed-corpus.py CONFORMANCE_DIR [GAME_FILE ...]

classic_lines: the first 50 messages each connection of each reference game
    sent and received, as a byte stream on the wire (CR LF after each, a
    multi-line text continued with backslashes), and one seed per message
    type.
ws_json:       every ClientMessage example of docs/protocol.md.
game_file:     the reference games' logs (whole, and their first hand alone,
               which replays fast), and the game files given (exported with
               `mahjong-server export`).
"""

import hashlib
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent
RECORD = re.compile(r"^([<>])cnx(\d+) ?(.*)$")


def write(target: str, data: bytes) -> None:
    folder = ROOT / "corpus" / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def records(log: str):
    """(direction, connection, message) of a log, inner line feeds kept."""
    out = []
    for line in log.split("\r\n"):
        m = RECORD.match(line)
        if m:
            out.append([m.group(1), m.group(2), m.group(3)])
        elif out:
            out[-1][2] += "\n" + line
    return out


def wire(message: str) -> bytes:
    """A message as sent on a socket: backslashes doubled, inner line feeds
    as backslash CR LF, CR LF at the end."""
    return (message.replace("\\", "\\\\").replace("\n", "\\\r\n") + "\r\n").encode()


def classic_lines(logs) -> None:
    by_type = {}
    for log in logs:
        streams = {}
        for direction, cnx, message in records(log):
            streams.setdefault((direction, cnx), []).append(message)
            by_type.setdefault(message.split(" ", 1)[0], message)
        for messages in streams.values():
            # The start of each stream (the handshake, the options, the
            # first deal and discards): short, so that runs are fast; the
            # seeds of one message per type reach the rest.
            write("classic_lines", b"".join(wire(m) for m in messages[:50]))
    for message in by_type.values():
        write("classic_lines", wire(message))


def ws_json(protocol_md: str) -> None:
    for block in re.findall(r"<!-- json: ClientMessage -->\s*```json\n(.*?)```", protocol_md, re.S):
        write("ws_json", block.strip().encode())


def first_hand(log: str) -> str:
    """The log up to the end of its first hand's settlement."""
    end = log.find("Settlement ")
    if end < 0:
        return log
    # The settlement is told to four connections; keep them all.
    for _ in range(3):
        end = log.find("Settlement ", end + 1)
    return log[: log.find("\r\n>cnx", end) + 2]


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    conformance = pathlib.Path(sys.argv[1])
    # Bytes, not read_text: universal newlines would turn the records' CR LF into LF.
    logs = [p.read_bytes().decode("utf-8", errors="replace") for p in sorted(conformance.glob("games/*/game.log"))]
    if not logs:
        sys.exit(f"no games/*/game.log under {conformance}")
    classic_lines(logs)
    ws_json((ROOT.parent / "docs" / "protocol.md").read_text())
    for log in logs:
        write("game_file", log.encode())
        write("game_file", first_hand(log).encode())
    for path in sys.argv[2:]:
        write("game_file", pathlib.Path(path).read_bytes())
    for target in ("classic_lines", "ws_json", "game_file"):
        print(f"{target}: {len(list((ROOT / 'corpus' / target).iterdir()))} seeds")


if __name__ == "__main__":
    main()
