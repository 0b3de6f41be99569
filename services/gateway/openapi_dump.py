"""Write the OpenAPI document generated from the code: ``python -m services.gateway.openapi_dump
openapi/openapi.json``."""

from __future__ import annotations

import json
import sys
from typing import Any

from services.gateway.app import create_app
from shared.bootstrap import bootstrap
from shared.config import Settings


def spec() -> dict[str, Any]:
    """The OpenAPI document as a dict (on the in-memory adapters: no Redis needed)."""
    settings = Settings()
    app = create_app(settings, application=bootstrap(settings, backend="memory"))
    with app.app_context():
        return app.extensions["flask-smorest"]["apis"][""]["ext_obj"].spec.to_dict()


def main() -> None:
    """Dump to the path given (stdout without one), in the document's own order: its tags and
    operations in the order ``/docs`` shows them (``openapi_contract.ORDER``)."""
    text = json.dumps(spec(), indent=2) + "\n"
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
