"""Checks of the API fuzz run made with a viewer key (scripts/fuzz-api): a viewer reads only,
so no request that could change something may succeed."""

import schemathesis

READS = {"GET", "HEAD", "OPTIONS"}
# Routes anyone may call without a key (the password reset): a key's role does not apply.
PUBLIC = ("/api/v1/auth/",)


@schemathesis.check
def viewer_never_writes(ctx, response, case):
    """A write sent with a viewer key never gets a 2xx."""
    method = case.method.upper()
    if case.path.startswith(PUBLIC):
        return
    if method not in READS and 200 <= response.status_code < 300:
        raise AssertionError(
            f"a viewer key got {response.status_code} on {method} {case.path}: "
            "a viewer must not change anything"
        )
