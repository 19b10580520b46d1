"""The API's JSON body parser: the same strict rule as file imports (finite numbers, bounded nesting) → 400, not 500."""

from __future__ import annotations

import codecs

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from curation.toolkit.strict_json import JsonInputError, json_loads_strict


class StrictJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = codecs.getreader(encoding)(stream).read()
        except UnicodeDecodeError as error:
            raise ParseError(f"The body is not {encoding} text (byte {error.start}).") from error
        try:
            return json_loads_strict(text)
        except JsonInputError as error:
            raise ParseError(f"JSON parse error - {error}") from error
