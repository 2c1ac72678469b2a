"""The text rule pass of the API fuzz run (scripts/fuzz-api): every generated body and query
gets a NUL or a right-to-left override (U+202E) in one of its string fields, chosen by the
fuzzer like any other input, so over a run every string field of every operation is sent both.
The run's checks then require that none of these answers is a 5xx or an undocumented status
(the API answers 422 naming the field)."""

import hypothesis.strategies as st
import schemathesis

BAD = ("a\u0000b", "a\u202eb")


def _strings(value, at=()):
    """The places of the strings in a JSON value, as key and index paths."""
    if isinstance(value, str):
        yield at
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, at + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, at + (i,))


def _replaced(value, at, bad):
    if not at:
        return bad
    head, rest = at[0], at[1:]
    if isinstance(value, dict):
        return {k: (_replaced(v, rest, bad) if k == head else v) for k, v in value.items()}
    return [(_replaced(v, rest, bad) if i == head else v) for i, v in enumerate(value)]


def _with_bad_text(value):
    places = list(_strings(value))
    if not places:
        return st.just(value)
    return st.tuples(st.sampled_from(places), st.sampled_from(BAD)).map(
        lambda p: _replaced(value, p[0], p[1])
    )


@schemathesis.hook
def flatmap_body(ctx, body):
    return _with_bad_text(body)


@schemathesis.hook
def flatmap_query(ctx, query):
    return _with_bad_text(query)
