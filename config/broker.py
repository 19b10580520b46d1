"""The embedded broker: kombu's filesystem transport, with each message file written whole before a worker can see it.

kombu writes a message in place under its final name, so a worker that lists the folder meanwhile can take the file
empty or half written and die on its JSON (celery/kombu#1551; seen here as the control worker's crash, which stopped
`scripts/start`). Here a message is written under a name no reader takes (`.name.part`: kombu reads only
`*.<queue>.msg`) and renamed into place, which is atomic within one file system.

config/celery.py registers it under kombu's own name, `filesystem`, so `filesystem://` URLs (the embedded default)
take it in every process, and a broker URL of another scheme still takes that scheme's transport."""

from __future__ import annotations

import os
import tempfile
import uuid
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


class Channel(filesystem.Channel):
    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"  # kombu's name: its readers sort by it
        descriptor, partial = tempfile.mkstemp(dir=self.data_folder_out, prefix=".", suffix=".part")
        try:
            with os.fdopen(descriptor, "wb") as file:
                file.write(str_to_bytes(dumps(payload)))
            os.replace(partial, os.path.join(self.data_folder_out, name))
        except OSError as exc:
            if os.path.exists(partial):
                os.unlink(partial)
            raise ChannelError(f"Cannot add a message to {self.data_folder_out!r}") from exc


class Transport(filesystem.Transport):
    Channel = Channel
