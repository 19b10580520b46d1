"""The embedded broker writes each message whole before a worker can take it (config/broker.py)."""

from __future__ import annotations

import json
import os

from kombu import Connection

from config import broker


def test_a_message_file_appears_only_once_it_is_whole(tmp_path, monkeypatch):
    folder, processed, control = (tmp_path / name for name in ("queue", "processed", "control"))
    for path in (folder, processed, control):
        path.mkdir()
    seen = []
    rename = os.replace

    def watched(source, target):  # what a worker listing the folder would find just before the message appears
        seen.append(([p.name for p in folder.iterdir() if p.name.endswith(".msg")], open(source, "rb").read()))
        rename(source, target)

    monkeypatch.setattr(broker.os, "replace", watched)
    options = {
        "data_folder_in": str(folder),
        "data_folder_out": str(folder),
        "processed_folder": str(processed),
        "control_folder": str(control),
        "store_processed": False,
    }
    with Connection("filesystem://", transport_options=options) as connection:  # the embedded default's scheme
        queue = connection.SimpleQueue("work")
        queue.put({"item": 7})
        message = queue.get(timeout=2)
        assert message.payload == {"item": 7}
        message.ack()
        queue.close()
    [(visible, written)] = seen
    assert visible == []  # no message file of any queue while this one was being written
    assert json.loads(written)["body"]  # the file renamed into place holds the whole message
    assert [p.name for p in folder.iterdir()] == []  # taken, and no partial file left behind


def test_filesystem_urls_take_this_transport_and_other_schemes_their_own():
    assert Connection("filesystem://").transport_cls == "filesystem"
    assert type(Connection("filesystem://").transport) is broker.Transport
    assert type(Connection("redis://127.0.0.1:1/0").transport).__module__ == "kombu.transport.redis"
