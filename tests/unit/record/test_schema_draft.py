"""The record schema is itself a valid JSON Schema (draft 2020-12)."""

from __future__ import annotations

from surge.record.schema import load_schema


def test_the_schema_is_a_valid_draft_2020_12_schema():
    import jsonschema

    schema = load_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
